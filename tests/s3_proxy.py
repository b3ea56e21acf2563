#!/usr/bin/env python3
"""A fault-injecting HTTP/1.1 proxy in front of a local S3 server, for
tests/test_s3.sh and tools/bench/bench_s3.py (standard library only).

    python3 tests/s3_proxy.py LISTEN_PORT UPSTREAM_PORT [--latency-ms MS]
        [--fail-every N [--fail-status S]] [--fail-after N] [--drop-every N] [--log]

Clients keep their connections (keep-alive); each request is forwarded on a
new connection to 127.0.0.1:UPSTREAM_PORT and its response streamed back.
Requests are forwarded byte for byte, so SigV4 signatures stay valid.

  --latency-ms MS   every request waits MS milliseconds before it is forwarded
  --fail-every N    every N-th request is answered with --fail-status (503;
                    429 for throttling) and S3's SlowDown XML, not forwarded
  --fail-after N    every request after the first N is answered so
  --drop-every N    every N-th GET gets its status line, headers and half of
                    its body, then the connection is closed (a dropped
                    connection mid-body)
  --lie-every N     every N-th GET's Content-Length claims 100 bytes more
                    than its body, then the connection is closed (a short body)
  --shift-every N   every N-th ranged GET's Content-Range claims bytes one
                    later than those sent (a server answering another range)
  --log             one line per request on stderr (method, path, what was done)

Prints "ready" on stdout once it listens.
"""
import argparse
import socket
import socketserver
import sys
import threading
import time

lock = threading.Lock()
count = {"requests": 0, "gets": 0}


def read_head(sock, buf):
    """The next request or response head from sock (bytes before the blank
    line) and what came after it; (None, b"") at EOF."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    return head, rest


def header(lines, name):
    name = name.lower() + b":"
    for line in lines[1:]:
        if line.lower().startswith(name):
            return line.split(b":", 1)[1].strip()
    return None


def shift_range(line):
    """'Content-Range: bytes A-B/T' as bytes A+1-B+1 (when that fits in T)."""
    try:
        a, rest = line.split(b"bytes", 1)[1].strip().split(b"-", 1)
        b, t = rest.split(b"/", 1)
        if int(b) + 1 < int(t):
            return b"Content-Range: bytes %d-%d/%s" % (int(a) + 1, int(b) + 1, t)
    except (ValueError, IndexError):
        pass
    return line


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        buf = b""
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle wait between head and body
        while True:
            head, buf = read_head(self.request, buf)
            if head is None:
                return
            lines = head.split(b"\r\n")
            method = lines[0].split(b" ")[0]
            clen = int(header(lines, b"content-length") or 0)
            while len(buf) < clen:
                chunk = self.request.recv(65536)
                if not chunk:
                    return
                buf += chunk
            body, buf = buf[:clen], buf[clen:]
            if not self.one(lines, method, body):
                return

    def one(self, lines, method, body):
        """One request; False when the client connection is to close."""
        a = self.server.args
        with lock:
            count["requests"] += 1
            n = count["requests"]
            if method == b"GET":
                count["gets"] += 1
            g = count["gets"]
        path = lines[0].split(b" ")[1].decode(errors="replace")
        if (a.fail_every and n % a.fail_every == 0) or (a.fail_after is not None and n > a.fail_after):
            xml = b"<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>injected by s3_proxy</Message></Error>"
            reason = {503: b"Service Unavailable", 429: b"Too Many Requests"}.get(a.fail_status, b"Error")
            self.request.sendall(b"HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n\r\n%s"
                                 % (a.fail_status, reason, len(xml), xml))
            self.log("%s %s: answered %d" % (method.decode(), path, a.fail_status))
            return True
        if a.latency_ms:
            time.sleep(a.latency_ms / 1000.0)
        fwd = [l for l in lines if not l.lower().startswith(b"connection:")] + [b"Connection: close"]
        up = socket.create_connection(("127.0.0.1", self.server.upstream))
        up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            up.sendall(b"\r\n".join(fwd) + b"\r\n\r\n" + body)
            rhead, rest = read_head(up, b"")
            if rhead is None:
                return False
            rlines = rhead.split(b"\r\n")
            status = int(rlines[0].split(b" ")[1])
            rlen = header(rlines, b"content-length")
            framed = rlen is not None or (header(rlines, b"transfer-encoding") or b"").lower() == b"chunked"
            keep = framed or method == b"HEAD" or status in (204, 304)
            out = [l for l in rlines if not l.lower().startswith(b"connection:")]
            lie = a.lie_every and method == b"GET" and g % a.lie_every == 0 and rlen is not None
            if lie:
                out = [b"Content-Length: %d" % (int(rlen) + 100) if l.lower().startswith(b"content-length:") else l for l in out]
                keep = False
            if a.shift_every and method == b"GET" and g % a.shift_every == 0:
                out = [shift_range(l) if l.lower().startswith(b"content-range:") else l for l in out]
            out.append(b"Connection: keep-alive" if keep else b"Connection: close")
            self.request.sendall(b"\r\n".join(out) + b"\r\n\r\n")
            cut = None
            if a.drop_every and method == b"GET" and g % a.drop_every == 0 and rlen is not None and int(rlen) > 1:
                cut = int(rlen) // 2
            sent = self.relay(up, rest, cut)
            if cut is not None:
                self.log("%s %s: cut after %d of %s body bytes" % (method.decode(), path, sent, rlen.decode()))
                self.request.shutdown(socket.SHUT_RDWR)
                return False
            self.log("%s %s: %d, %d body bytes%s" % (method.decode(), path, status, sent, ", length lied" if lie else ""))
            if not keep:
                self.request.shutdown(socket.SHUT_RDWR)
            return keep
        finally:
            up.close()

    def relay(self, up, rest, cut):
        """The upstream body to the client until EOF (or `cut` bytes)."""
        sent = 0
        data = rest
        mem = bytearray(1 << 20)
        while True:
            if data:
                if cut is not None and sent + len(data) >= cut:
                    self.request.sendall(data[: cut - sent])
                    return cut
                self.request.sendall(data)
                sent += len(data)
            k = up.recv_into(mem)
            if k == 0:
                return sent
            data = memoryview(mem)[:k]

    def log(self, msg):
        if self.server.args.log:
            sys.stderr.write("proxy: %s\n" % msg)
            sys.stderr.flush()


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
    request_queue_size = 256  # clients open many connections at once (the default 5 drops SYNs: 1 s stalls)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("upstream", type=int)
    ap.add_argument("--latency-ms", type=float, default=0)
    ap.add_argument("--fail-every", type=int, default=0)
    ap.add_argument("--fail-status", type=int, default=503)
    ap.add_argument("--fail-after", type=int, default=None)
    ap.add_argument("--drop-every", type=int, default=0)
    ap.add_argument("--lie-every", type=int, default=0)
    ap.add_argument("--shift-every", type=int, default=0)
    ap.add_argument("--log", action="store_true")
    args = ap.parse_args()
    srv = Server(("127.0.0.1", args.port), Handler)
    srv.upstream = args.upstream
    srv.args = args
    print("ready", flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
