# What a `list` flood costs (Scripts/list-flood.sh runs it): spawns INSTANCES keyed counters,
# then for SECONDS measures another client's `get` latency and the coordinator's CPU (fsm-launch,
# LAUNCH_PID), first idle, then while a client sends `list` as fast as it can, 64 in flight.
# Usage: list-flood.py ENDPOINT LAUNCH_PID INSTANCES SECONDS
import json, os, struct, sys, threading, time, zmq
EP, PID, INSTANCES, SECONDS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
ctx = zmq.Context()
def header(kind, corr, flags=0): return struct.pack(">BBBBQ", 0x47, 1, kind, flags, corr)
def env(kind, corr, addr, payload):
    a = addr.encode(); return struct.pack(">BBQH", kind, 2, corr, len(a)) + a + struct.pack(">I", len(payload)) + payload
def cpu():
    f = open(f"/proc/{PID}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
# Spawn keyed instances in batches of 500 no-wait increments.
s = ctx.socket(zmq.DEALER); s.linger = 0; s.setsockopt(zmq.RCVTIMEO, 60000); s.connect(EP)
n = 0
while n < INSTANCES:
    k = min(500, INSTANCES - n)
    s.send_multipart([header(7, k), b"", b"".join(env(1, n + i + 1, f"counter/i{n + i}", b'"increment"') for i in range(k))])
    got = 0
    while got < k:
        h, a, p = s.recv_multipart()
        if h[2] == 7:
            off = 0
            while off < len(p):
                (alen,) = struct.unpack_from(">H", p, off + 10); off += 12 + alen
                (plen,) = struct.unpack_from(">I", p, off); off += 4 + plen; got += 1
        else: got += 1
    n += k; print("spawned", n, flush=True) if n % 5000 == 0 else None
s.send_multipart([header(5, 1), b"", b""]); h, a, p = s.recv_multipart()
print("listing bytes", len(p), "instanceCount", [m.get("instanceCount") for m in json.loads(p)["machines"] if m["name"] == "counter"], flush=True)

def probe(seconds):
    c = ctx.socket(zmq.DEALER); c.linger = 0; c.setsockopt(zmq.RCVTIMEO, 10000); c.connect(EP)
    lat = []; end = time.time() + seconds; corr = 0
    while time.time() < end:
        corr += 1; t = time.perf_counter()
        c.send_multipart([header(2, corr), b"counter/i0", b""])
        try:
            while True:
                h, a, p = c.recv_multipart()
                if struct.unpack(">Q", h[4:])[0] == corr: break
        except zmq.Again:
            print("get timed out after 10 s", flush=True)
        lat.append((time.perf_counter() - t) * 1000); time.sleep(0.01)
    c.close(); lat.sort()
    return len(lat), lat[len(lat) // 2], lat[int(len(lat) * 0.99)], lat[-1]

stop = threading.Event(); lists = [0]
def flood():
    f = ctx.socket(zmq.DEALER); f.linger = 0; f.connect(EP); window = 0; corr = 0
    poller = zmq.Poller(); poller.register(f, zmq.POLLIN)
    while not stop.is_set():
        while window < 64:
            corr += 1; f.send_multipart([header(5, corr), b"", b""]); window += 1
        if poller.poll(100):
            while True:
                try: f.recv_multipart(zmq.NOBLOCK); window -= 1; lists[0] += 1
                except zmq.Again: break
    f.close()
c0 = cpu(); t0 = time.time(); base = probe(SECONDS); c1 = cpu(); t1 = time.time()
print(f"idle:  get n={base[0]} p50={base[1]:.2f}ms p99={base[2]:.2f}ms max={base[3]:.2f}ms  coordinator cpu {(c1 - c0) / (t1 - t0) * 100:.0f}%", flush=True)
th = threading.Thread(target=flood); th.start(); time.sleep(0.5)
c0 = cpu(); t0 = time.time(); l0 = lists[0]; under = probe(SECONDS); c1 = cpu(); t1 = time.time(); l1 = lists[0]
stop.set(); th.join()
print(f"flood: get n={under[0]} p50={under[1]:.2f}ms p99={under[2]:.2f}ms max={under[3]:.2f}ms  coordinator cpu {(c1 - c0) / (t1 - t0) * 100:.0f}%  lists/s {(l1 - l0) / (t1 - t0):.0f}", flush=True)
