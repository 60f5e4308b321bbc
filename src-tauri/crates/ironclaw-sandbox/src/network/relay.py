# IronClaw egress relay. Runs in a hardened container that sits on two internal Docker
# networks: the sandboxes' network (where it listens) and an uplink network whose gateway is
# the host, where IronClaw's proxy listens. It makes no decisions: it passes bytes, and tells
# the proxy which sandbox address each connection came from (PROXY protocol v1), because the
# proxy cannot see that address itself.
#
# Why a relay at all: the sandboxes' network has no host address on it (inhibit_ipv4), so code
# in a sandbox cannot reach anything on the host, not even a service bound to 0.0.0.0. Only
# this container can, and only the proxy's port is what it connects to.
#
# argv: LISTEN_IP LISTEN_PORT PROXY_IP PROXY_PORT
import fcntl
import os
import socket
import sys
import threading

LISTEN_IP, LISTEN_PORT, PROXY_IP, PROXY_PORT = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
PIPE_SIZE = 256 * 1024
F_SETPIPE_SZ = 1031  # fcntl.F_SETPIPE_SZ, spelled out for older Pythons
DOWN = (
    "IronClaw's egress proxy is not running (start the session again from IronClaw)\n"
).encode()


def pump(src, dst):
    # splice(2) through a pipe: the bytes never enter this process, so the relay costs the
    # kernel a page move instead of two copies and a Python loop iteration per chunk.
    r, w = os.pipe()
    try:
        fcntl.fcntl(w, F_SETPIPE_SZ, PIPE_SIZE)
    except OSError:
        pass  # over the per-user pipe quota: the default size still works
    sfd, dfd = src.fileno(), dst.fileno()
    try:
        while True:
            n = os.splice(sfd, w, PIPE_SIZE)
            if not n:
                break
            while n:
                n -= os.splice(r, dfd, n)
    except OSError:
        pass
    finally:
        os.close(r)
        os.close(w)
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def handle(client, addr):
    with client:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            up = socket.create_connection((PROXY_IP, PROXY_PORT), timeout=5)
        except OSError:
            head = "HTTP/1.1 503 IronClaw egress proxy is not running\r\nContent-Type: text/plain\r\n"
            head += "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(DOWN)
            try:
                client.sendall(head.encode() + DOWN)
            except OSError:
                pass
            return
        with up:
            up.settimeout(None)
            up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            line = "PROXY TCP4 %s %s %d %d\r\n" % (addr[0], LISTEN_IP, addr[1], LISTEN_PORT)
            up.sendall(line.encode())
            back = threading.Thread(target=pump, args=(up, client), daemon=True)
            back.start()
            pump(client, up)
            back.join()


def main():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((LISTEN_IP, LISTEN_PORT))
    srv.listen(512)
    while True:
        client, addr = srv.accept()
        try:
            threading.Thread(target=handle, args=(client, addr), daemon=True).start()
        except RuntimeError:
            # Out of threads (the pids limit): refuse this one, keep serving the others.
            client.close()


main()
