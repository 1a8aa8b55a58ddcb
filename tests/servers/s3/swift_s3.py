#!/usr/bin/python3
"""A one-node OpenStack Swift with the s3api middleware, for tests: S3 that checks SigV4.

  swift_s3.py setup DIR    writes DIR/etc (configs, rings), DIR/srv/d1 and DIR/s3.env
  swift_s3.py serve DIR    runs the four servers (proxy, account, container, object) in one
                           process, in the foreground
  swift_s3.py wait DIR S   waits up to S seconds until a signed PUT/GET/DELETE round trip works

Everything lives under DIR and listens on 127.0.0.1 only. start.sh and stop.sh drive this file.
"""
import os
import re
import secrets
import socket
import sys
import time

SERVERS = ("account", "container", "object", "proxy")


def free_ports(count):
    """Ports the kernel hands out now; bound together so that they differ."""
    socks = []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def server_conf(etc, srv, name, port):
    common = (
        "[DEFAULT]\n"
        f"bind_ip = 127.0.0.1\nbind_port = {port}\nworkers = 0\n"
        f"swift_dir = {etc}\ndevices = {srv}\nmount_check = false\n"
        "disable_fallocate = true\nlog_level = INFO\n\n"
    )
    return common + (
        f"[pipeline:main]\npipeline = {name}-server\n\n"
        f"[app:{name}-server]\nuse = egg:swift#{name}\n\n"
    )


def proxy_conf(etc, port, secret):
    # Why the hand-written cache: tempauth refuses to authorise without a memcache in the WSGI
    # environment ("Memcache required"); a dict in the one proxy process saves a memcached daemon.
    return (
        "[DEFAULT]\n"
        f"bind_ip = 127.0.0.1\nbind_port = {port}\nworkers = 0\nswift_dir = {etc}\n"
        "log_level = INFO\n\n"
        "[pipeline:main]\n"
        "pipeline = catch_errors gatekeeper healthcheck proxy-logging cache listing_formats "
        "s3api tempauth copy slo dlo proxy-logging proxy-server\n\n"
        "[app:proxy-server]\nuse = egg:swift#proxy\naccount_autocreate = true\n\n"
        "[filter:catch_errors]\nuse = egg:swift#catch_errors\n\n"
        "[filter:gatekeeper]\nuse = egg:swift#gatekeeper\n\n"
        "[filter:healthcheck]\nuse = egg:swift#healthcheck\n\n"
        "[filter:proxy-logging]\nuse = egg:swift#proxy_logging\n\n"
        "[filter:cache]\npaste.filter_factory = swift_s3:dict_cache_filter\n\n"
        "[filter:listing_formats]\nuse = egg:swift#listing_formats\n\n"
        "[filter:s3api]\nuse = egg:swift#s3api\nlocation = us-east-1\n\n"
        f"[filter:tempauth]\nuse = egg:swift#tempauth\nuser_test_tester = {secret} .admin\n\n"
        "[filter:copy]\nuse = egg:swift#copy\n\n"
        "[filter:slo]\nuse = egg:swift#slo\n\n"
        "[filter:dlo]\nuse = egg:swift#dlo\n\n"
    )


def build_rings(etc, ports):
    from swift.common.ring import RingBuilder

    for name in ("account", "container", "object"):
        # 2^2 partitions, one replica, one device: the smallest ring that rebalances.
        builder = RingBuilder(2, 1, 1)
        builder.add_dev({"id": 0, "region": 1, "zone": 1, "ip": "127.0.0.1",
                         "port": ports[name], "device": "d1", "weight": 1.0})
        builder.rebalance()
        builder.get_ring().save(os.path.join(etc, f"{name}.ring.gz"))


def setup(root):
    etc = os.path.join(root, "etc")
    srv = os.path.join(root, "srv")
    os.makedirs(etc, exist_ok=True)
    os.makedirs(os.path.join(srv, "d1"), exist_ok=True)
    ports = dict(zip(SERVERS, free_ports(len(SERVERS))))
    secret = secrets.token_hex(20)
    write(os.path.join(etc, "swift.conf"),
          "[swift-hash]\nswift_hash_path_suffix = omicsfs-test\n\n"
          "[storage-policy:0]\nname = Policy-0\ndefault = yes\n")
    for name in ("account", "container", "object"):
        write(os.path.join(etc, f"{name}-server.conf"),
              server_conf(etc, srv, name, ports[name]))
    write(os.path.join(etc, "proxy-server.conf"), proxy_conf(etc, ports["proxy"], secret))
    build_rings(etc, ports)
    endpoint = f"http://127.0.0.1:{ports['proxy']}"
    write(os.path.join(root, "s3.env"),
          f"S3_ENDPOINT={endpoint}\nS3_REGION=us-east-1\n"
          f"AWS_ACCESS_KEY_ID=test:tester\nAWS_SECRET_ACCESS_KEY={secret}\n")


class DictCache:
    """The part of swift.common.memcached.MemcacheRing that tempauth and the proxy use."""

    def __init__(self):
        self.data = {}

    def get(self, key, raise_on_error=False):
        return self.data.get(key)

    def set(self, key, value, serialize=True, time=0, min_compress_len=0, raise_on_error=False):
        self.data[key] = value

    def incr(self, key, delta=1, time=0):
        self.data[key] = int(self.data.get(key, 0)) + delta
        return self.data[key]

    def decr(self, key, delta=1, time=0):
        return self.incr(key, -delta, time)

    def delete(self, key, server_key=None):
        self.data.pop(key, None)

    def get_multi(self, keys, server_key):
        return [self.data.get(k) for k in keys]

    def set_multi(self, mapping, server_key, serialize=True, time=0, min_compress_len=0):
        self.data.update(mapping)


def dict_cache_filter(global_conf, **local_conf):
    cache = DictCache()

    def factory(app):
        def middleware(env, start_response):
            env["swift.cache"] = cache
            return app(env, start_response)
        return middleware
    return factory


def serve(root):
    """All four servers in this one process, as Swift's in-process functional tests run them.

    Why one process: each Python interpreter spends ~0.7 s of CPU importing eventlet and swift;
    with the four of them a start took 10.5-11.4 s on this VM under load (load average 6.5), one
    process 6.3 s.
    """
    import logging

    import eventlet
    import eventlet.wsgi
    from swift.common import utils, wsgi

    utils.set_swift_dir(os.path.join(root, "etc"))

    class Quiet(logging.Handler):
        def __init__(self, *args, **kwargs):
            logging.Handler.__init__(self)

        def emit(self, record):
            pass
    # No syslog in a test container: log to stderr only (verbose=True adds the console handler).
    utils.ThreadSafeSysLogHandler = Quiet
    utils.eventlet_monkey_patch()
    os.environ["TZ"] = "UTC+0"
    servers = []
    for name in SERVERS:
        conf_path = os.path.join(root, "etc", f"{name}-server.conf")
        conf, logger, log_name = wsgi._initrp(conf_path, f"{name}-server", verbose=True)
        sock = wsgi.get_socket(conf)
        app = wsgi.loadapp(conf_path, global_conf={"log_name": log_name})
        # Not wsgi.run_server: it switches eventlet's hub, which strands the other servers.
        servers.append(eventlet.spawn(
            eventlet.wsgi.server, sock, app, utils.NullLogger(),
            custom_pool=eventlet.GreenPool(1024), protocol=wsgi.SwiftHttpProtocol,
            capitalize_response_headers=False))
    for server in servers:
        server.wait()
    return 0


def ports_listening(root):
    for name in SERVERS:
        with open(os.path.join(root, "etc", f"{name}-server.conf")) as f:
            port = int(re.search(r"^bind_port = (\d+)$", f.read(), re.M).group(1))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError:
            return False
    return True


def round_trip(env):
    """A bucket, an object written, read back and deleted: every server answers."""
    import s3cli

    probe = "omicsfs-probe"
    for method, path, body, ok in (("PUT", f"/{probe}", b"", (200, 409)),
                                   ("PUT", f"/{probe}/k", b"probe", (200,)),
                                   ("GET", f"/{probe}/k", b"", (200,)),
                                   ("DELETE", f"/{probe}/k", b"", (204,)),
                                   ("DELETE", f"/{probe}", b"", (204,))):
        status, _, answer = s3cli.request(method, path, body=body, env=env)
        if status not in ok or (method == "GET" and answer != b"probe"):
            return f"{method} {path}: HTTP {status} {answer[:300]!r}"
    return None


def wait(root, seconds):
    """0 once the servers answer; 1 (with the reason on stderr) when they do not in time."""
    env = dict(line.strip().split("=", 1) for line in open(os.path.join(root, "s3.env")))
    deadline = time.monotonic() + seconds
    reason = "ports not listening"
    while time.monotonic() < deadline:
        if ports_listening(root):
            try:
                reason = round_trip(env)
            except OSError as err:
                reason = str(err)
            if reason is None:
                return 0
        time.sleep(0.2)
    sys.stderr.write(f"swift_s3.py: not ready after {seconds} s: {reason}\n")
    return 1


def main(argv):
    if len(argv) == 3 and argv[1] == "setup":
        setup(argv[2])
        return 0
    if len(argv) == 4 and argv[1] == "wait":
        return wait(argv[2], float(argv[3]))
    if len(argv) == 3 and argv[1] == "serve":
        return serve(argv[2])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
