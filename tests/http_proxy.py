#!/usr/bin/env python3
"""A deliberately unreliable HTTP/1.1 proxy for tests/test_http.sh.

    python3 tests/http_proxy.py LISTEN_PORT UPSTREAM_PORT [--drop-every N] [--fail-after N]

Forwards each request to 127.0.0.1:UPSTREAM_PORT (one request per
connection). With --drop-every N, every N-th GET is answered with its
status line, headers and only half of its body, then the connection is
closed (a dropped connection mid-read). With --fail-after N, every GET after
the first N is cut the same way (a persistent failure). HEAD requests pass.
Prints one line per request to stderr. Standard library only.
"""
import argparse
import socket
import socketserver
import sys
import threading

lock = threading.Lock()
state = {"gets": 0}


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    return head, rest


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        head, _ = read_head(self.request)
        if head is None:
            return
        lines = head.split(b"\r\n")
        method = lines[0].split(b" ")[0]
        fwd = [l for l in lines if not l.lower().startswith(b"connection:")]
        fwd.append(b"Connection: close")
        up = socket.create_connection(("127.0.0.1", self.server.upstream))
        up.sendall(b"\r\n".join(fwd) + b"\r\n\r\n")
        resp = b""
        while True:
            chunk = up.recv(1 << 20)
            if not chunk:
                break
            resp += chunk
        up.close()
        cut = False
        if method == b"GET":
            with lock:
                state["gets"] += 1
                n = state["gets"]
            a = self.server.args
            cut = (a.drop_every and n % a.drop_every == 0) or (a.fail_after is not None and n > a.fail_after)
        if cut:
            h, body = resp.split(b"\r\n\r\n", 1)
            self.request.sendall(h + b"\r\n\r\n" + body[: len(body) // 2])
            sys.stderr.write("proxy: %s %s: cut after %d of %d body bytes\n" % (
                method.decode(), lines[0].split(b" ")[1].decode(), len(body) // 2, len(body)))
        else:
            self.request.sendall(resp)
        try:
            self.request.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("upstream", type=int)
    ap.add_argument("--drop-every", type=int, default=0)
    ap.add_argument("--fail-after", type=int, default=None)
    args = ap.parse_args()
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.upstream = args.upstream
    srv.args = args
    srv.serve_forever()


if __name__ == "__main__":
    main()
