"""multiprocessing with a given start method: a pool, a process and a queue."""
import multiprocessing as mp
import sys


def square(x):
    return x * x


def writer(path, q):
    with open(path, "w") as f:
        f.write("from a child\n")
    q.put("child done")


if __name__ == "__main__":
    method = sys.argv[1]
    mp.set_start_method(method)
    with mp.Pool(3) as pool:
        print(method, "pool sum", sum(pool.map(square, range(200))))
    q = mp.Queue()
    p = mp.Process(target=writer, args=(f"child-{method}.txt", q))
    p.start()
    print(q.get())
    p.join()
    print("exitcode", p.exitcode)
