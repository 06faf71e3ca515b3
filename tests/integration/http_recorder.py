"""An upstream for the plain-HTTP forwarding tests that records exactly what it received: every
byte of every connection, as one JSON line per connection (latin-1 text) once it closes. It
answers each connection with one small 200 once a request head has arrived and the bytes paused,
then keeps recording what else comes until the peer closes or stays silent.

    http_recorder.py --host ADDRESS --log FILE     prints PORT=N, then serves until killed
"""
import argparse
import json
import socket
import threading

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\nConnection: close\r\n\r\nrecorded\n"
PAUSE = 0.5


def receive(conn, got, until_pause):
    """Appends to `got` until EOF, an error, or (until_pause) a pause after a head."""
    while True:
        try:
            chunk = conn.recv(65536)
        except socket.timeout:
            if until_pause and b"\r\n\r\n" in got:
                return True
            if not until_pause:
                return False
            continue
        except OSError:
            return False
        if not chunk:
            return False
        got += chunk


def serve(conn, log, lock):
    got = bytearray()
    conn.settimeout(PAUSE)
    if receive(conn, got, True):
        try:
            conn.sendall(ANSWER)
        except OSError:
            pass
        receive(conn, got, False)
    conn.close()
    with lock, open(log, "a") as f:
        f.write(json.dumps({"bytes": bytes(got).decode("latin-1")}) + "\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((args.host, 0))
    listener.listen(64)
    print("PORT=%d" % listener.getsockname()[1], flush=True)
    lock = threading.Lock()
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn, args.log, lock), daemon=True).start()


if __name__ == "__main__":
    main()
