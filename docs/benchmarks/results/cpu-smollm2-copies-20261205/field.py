"""Field check for issue 51: fresh SPECCHAT_HOME, a busy loop on one of the two cores, two
`specchat serve` processes (Auto and off) asked the moment they answer /health, through the
openai SDK; a held-out code edit sent 4 times to each, alternating."""
import os, subprocess, sys, tempfile, time, statistics, tomllib
import httpx, openai
prompts = tomllib.load(open("/work/main/lab/copy_prompts.toml", "rb"))
prompt = next(p for p in prompts["again"] if p["name"] == "ts-cart-discount")["text"]
busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
servers = {}
for i, mode in enumerate(["auto", "off"]):
    home = tempfile.mkdtemp(prefix=f"specchat-field51-{mode}-")
    port = 8711 + i
    p = subprocess.Popen([sys.executable, "-m", "desktop_app", "serve", "--port", str(port), "--spec", mode],
                         env={**os.environ, "SPECCHAT_HOME": home}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/work/main")
    servers[mode] = (p, port)
for mode, (p, port) in servers.items():
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
rows = []
for r in range(4):
    for mode in (["auto", "off"] if r % 2 == 0 else ["off", "auto"]):
        c = openai.OpenAI(base_url=f"http://127.0.0.1:{servers[mode][1]}/v1", api_key="x")
        t = time.monotonic()
        out = c.chat.completions.create(model="x", messages=[{"role": "user", "content": prompt}], temperature=0, max_tokens=256)
        dt = time.monotonic() - t
        extra = out.model_extra or {}
        tm = extra.get("timings", {})
        rows.append((r, mode, out.usage.completion_tokens, dt, tm.get("speculation", {}).get("target_passes"), out.choices[0].message.content))
        print(f"request {r+1} {mode:4} {out.usage.completion_tokens} tokens {dt:6.2f} s {out.usage.completion_tokens/dt:6.1f} tok/s passes {rows[-1][4]}", flush=True)
ratios = []
for r in range(1, 4):
    a = next(x for x in rows if x[0] == r and x[1] == "auto"); o = next(x for x in rows if x[0] == r and x[1] == "off")
    ratios.append((a[2] / a[3]) / (o[2] / o[3]))
print("Auto/off, requests 2-4:", [f"{x:.2f}" for x in ratios], "median", f"{statistics.median(ratios):.2f}")
print("texts equal:", sum(1 for r in range(4) if next(x for x in rows if x[0]==r and x[1]=="auto")[5] == next(x for x in rows if x[0]==r and x[1]=="off")[5]), "/ 4")
print("load average", os.getloadavg())
for p, _ in servers.values():
    p.terminate(); p.wait(20)
busy.kill()
