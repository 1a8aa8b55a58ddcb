#!/usr/bin/python3
"""An HTTP/1.1 proxy on 127.0.0.1 that holds every request for a fixed delay before passing it on:
a loopback server made to answer like a distant one (S3: 20-50 ms to the first byte), for
bench/remote. This kernel has no netem qdisc, so the latency is added here.

  latency_proxy.py UPSTREAM_PORT DELAY_MS    prints its own port, then serves until killed

One upstream connection per client connection; requests are GET or HEAD without bodies;
responses carry Content-Length (nginx's do), which is how one response is told from the next.
"""
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


def serve(client, upstream_port, delay):
    upstream = socket.create_connection(("127.0.0.1", upstream_port))
    upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    cf, uf = client.makefile("rb"), upstream.makefile("rb")
    try:
        while True:
            request = read_head(cf)
            if request is None:
                return
            time.sleep(delay)
            upstream.sendall(request)
            head = read_head(uf)
            if head is None:
                return
            client.sendall(head)
            if request.startswith(b"HEAD "):
                continue
            left = content_length(head)
            while left > 0:
                chunk = uf.read1(min(left, 1 << 20))
                if not chunk:
                    return
                client.sendall(chunk)
                left -= len(chunk)
    except OSError:
        pass
    finally:
        client.close()
        upstream.close()


def main():
    upstream_port, delay = int(sys.argv[1]), float(sys.argv[2]) / 1000.0
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(128)
    print(srv.getsockname()[1], flush=True)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn, upstream_port, delay), daemon=True).start()


if __name__ == "__main__":
    main()
