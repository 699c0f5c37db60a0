"""specchat serve (built-in model): an embeddings request near the 16,384-token cap, and a chat
request sent 1 s later: when each is answered, and the RSS of server + engine."""
import subprocess, sys, threading, time, json, os
from pathlib import Path
import httpx2 as httpx
port = 8932
base = f"http://127.0.0.1:{port}"
env = {**os.environ, "SPECCHAT_HOME": "/tmp/s33/home2"}
srv = subprocess.Popen([sys.executable, "-m", "desktop_app", "serve", "--port", str(port), "--spec", "off"], env=env, stderr=subprocess.DEVNULL)
def rss():
    pids = [srv.pid] + [int(c) for t in Path(f"/proc/{srv.pid}/task").iterdir() for c in (t / "children").read_text().split()]
    total = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS"): total += int(line.split()[1])
        except FileNotFoundError: pass
    return total // 1024
try:
    for _ in range(600):
        try:
            if httpx.get(base + "/v1/models", timeout=1).json().get("data"): break
        except httpx.HTTPError: pass
        time.sleep(0.2)
    httpx.post(base + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4}, timeout=120)
    before = rss()
    big = [" ".join(f"word{i}x{j}" for j in range(60)) for i in range(2048)]
    t = time.perf_counter(); r = httpx.post(base + "/v1/embeddings", json={"input": big}, timeout=600)
    print("reproduction:", r.status_code, round(time.perf_counter() - t, 2), "s", r.json()["error"]["message"][:90])
    texts = [" ".join(f"word{i}x{j}" for j in range(60)) for i in range(48)]
    out = {}
    t0 = time.perf_counter()
    def emb():
        r = httpx.post(base + "/v1/embeddings", json={"input": texts}, timeout=600)
        out["embed"] = (r.status_code, round(time.perf_counter() - t0, 2), r.json().get("usage"))
    th = threading.Thread(target=emb); th.start()
    time.sleep(1.0)
    t1 = time.perf_counter()
    r = httpx.post(base + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16}, timeout=600)
    out["chat"] = (r.status_code, round(time.perf_counter() - t1, 2))
    peak = rss()
    th.join()
    out["rss_mb"] = {"before": before, "during": peak, "after": rss()}
    print(json.dumps(out))
finally:
    srv.terminate(); srv.wait(30)
