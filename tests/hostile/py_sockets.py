"""socketpair echo, select and poll with timeouts, a queue between threads."""
import os
import queue
import select
import socket
import threading

a, b = socket.socketpair()


def echo():
    while True:
        d = b.recv(4096)
        if not d:
            break
        b.sendall(d.upper())
    b.close()


t = threading.Thread(target=echo)
t.start()
total = 0
for i in range(500):
    a.sendall(b"x" * 100)
    got = b""
    while len(got) < 100:
        r, _, _ = select.select([a], [], [], 5)
        got += a.recv(100 - len(got))
    total += len(got)
a.close()
t.join()
p = select.poll()
r, w = os.pipe()
p.register(r, select.POLLIN)
print("poll timeout:", p.poll(30))
q = queue.Queue()
workers = [threading.Thread(target=lambda i=i: q.put(i * i)) for i in range(20)]
for w_ in workers:
    w_.start()
for w_ in workers:
    w_.join()
print("echoed", total, "queue sum", sum(q.get() for _ in range(20)))
