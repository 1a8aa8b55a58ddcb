#!/usr/bin/python3
"""An HTTP/1.1 proxy on 127.0.0.1 that holds every request for a fixed delay before passing it on:
a loopback server made to answer like a distant one (S3: 20-50 ms to the first byte), for
bench/remote and the tests (testutil::LatencyProxy). This kernel has no netem qdisc, so the
latency is added here.

  latency_proxy.py UPSTREAM_PORT DELAY_MS [MAX_FILE]
      prints its own port, then serves until killed; with MAX_FILE, writes there the most
      requests it has had in flight at once (from a request's arrival to its response's end),
      each time that number rises

One upstream connection per client connection; requests are GET or HEAD without bodies;
responses carry Content-Length (nginx's do), which is how one response is told from the next.
"""
import os
import socket
import sys
import threading
import time


def read_head(f):
    lines = []
    while True:
        line = f.readline(65536)
        if not line:
            return None
        lines.append(line)
        if line in (b"\r\n", b"\n"):
            return b"".join(lines)


def content_length(head):
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0


in_flight = 0
most = 0
lock = threading.Lock()


def count(step, max_file):
    global in_flight, most
    with lock:
        in_flight += step
        if in_flight > most:
            most = in_flight
            if max_file:
                with open(max_file + ".tmp", "w") as f:
                    f.write("%d\n" % most)
                os.replace(max_file + ".tmp", max_file)


def serve(client, upstream_port, delay, max_file):
    upstream = socket.create_connection(("127.0.0.1", upstream_port))
    upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    cf, uf = client.makefile("rb"), upstream.makefile("rb")
    try:
        while True:
            request = read_head(cf)
            if request is None:
                return
            count(1, max_file)
            try:
                if not relay(request, client, upstream, uf, delay):
                    return
            finally:
                count(-1, max_file)
    except OSError:
        pass
    finally:
        client.close()
        upstream.close()


def relay(request, client, upstream, uf, delay):
    """One request and its response; False when either side closed."""
    time.sleep(delay)
    upstream.sendall(request)
    head = read_head(uf)
    if head is None:
        return False
    client.sendall(head)
    if request.startswith(b"HEAD "):
        return True
    left = content_length(head)
    while left > 0:
        chunk = uf.read1(min(left, 1 << 20))
        if not chunk:
            return False
        client.sendall(chunk)
        left -= len(chunk)
    return True


def main():
    upstream_port, delay = int(sys.argv[1]), float(sys.argv[2]) / 1000.0
    max_file = sys.argv[3] if len(sys.argv) > 3 else None
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(128)
    print(srv.getsockname()[1], flush=True)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn, upstream_port, delay, max_file), daemon=True).start()


if __name__ == "__main__":
    main()
