# IronClaw egress relay. Runs in a hardened container on every session's internal Docker network
# (one per session), the only thing there besides that session's sandbox; it listens on all of
# its addresses and never forwards packets between them. It makes no decisions and moves no bytes: it
# accepts each connection and hands the socket itself to IronClaw's proxy on the host over a
# Unix socket (SCM_RIGHTS) in a folder mounted from the host. The proxy then reads the sandbox's
# address from the socket (no header the sandbox could forge) and talks to it directly, so the
# relay adds no hop to the data path.
#
# Why a relay at all: the sandboxes' network has no host address on it (inhibit_ipv4), so code
# in a sandbox cannot reach anything on the host, not even a service bound to 0.0.0.0. Only
# this container can reach the proxy, and only through that one socket.
#
# argv: LISTEN_IP (0.0.0.0: every session network) LISTEN_PORT PROXY_SOCKET
import socket
import sys

LISTEN_IP, LISTEN_PORT, PROXY_SOCKET = sys.argv[1], int(sys.argv[2]), sys.argv[3]
DOWN = (
    "IronClaw's egress proxy is not running (start the session again from IronClaw)\n"
).encode()


def refuse(client):
    head = "HTTP/1.1 503 IronClaw egress proxy is not running\r\nContent-Type: text/plain\r\n"
    head += "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(DOWN)
    try:
        client.settimeout(1)
        client.sendall(head.encode() + DOWN)
    except OSError:
        pass


def hand_over(client):
    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        up.settimeout(5)
        up.connect(PROXY_SOCKET)
        # The descriptor in flight keeps the connection open after we close our copy; if the
        # proxy closes without taking it, the kernel closes it and the sandbox sees that.
        socket.send_fds(up, [b"c"], [client.fileno()])
        return True
    except OSError:
        return False
    finally:
        up.close()


def main():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((LISTEN_IP, LISTEN_PORT))
    srv.listen(1024)
    # Tell the proxy we are listening (a connection that carries no descriptor): whoever
    # started us waits for this before a sandbox may depend on us.
    try:
        hello = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        hello.settimeout(5)
        hello.connect(PROXY_SOCKET)
        hello.close()
    except OSError:
        pass
    while True:
        client, _ = srv.accept()
        with client:
            if not hand_over(client):
                refuse(client)


main()
