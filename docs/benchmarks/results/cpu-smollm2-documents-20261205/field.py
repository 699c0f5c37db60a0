"""Field check for issue 50: fresh SPECCHAT_HOME, a busy loop on one core, `specchat serve`, a PDF-free
text document (CC0-1.0, not used by the bench) sent as an Anthropic document block and an OpenAI file part,
Auto vs off alternating, plus a decompression bomb and /health during load."""
import base64, io, json, os, subprocess, sys, tempfile, time, statistics
import anthropic, httpx, openai
from PIL import Image
DOC = open("/usr/share/common-licenses/CC0-1.0", encoding="utf-8").read()
home = tempfile.mkdtemp(prefix="specchat-field-")
busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
port = 18491
srv = subprocess.Popen([sys.executable, "-m", "desktop_app", "serve", "--port", str(port), "--ctx", "4096"],
                       env={**os.environ, "SPECCHAT_HOME": home}, cwd=os.path.dirname(os.path.abspath(__file__)) + "/../../../..", stderr=subprocess.DEVNULL)
t0 = time.monotonic()
while True:
    try:
        if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200: break
    except httpx.HTTPError: pass
    time.sleep(0.5)
print(f"ready after {time.monotonic()-t0:.1f} s (fresh SPECCHAT_HOME {home}, busy loop running)")
claude = anthropic.Anthropic(base_url=f"http://127.0.0.1:{port}", api_key="x", max_retries=0, timeout=600)
gpt = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0, timeout=600)
b64 = base64.b64encode(DOC.encode()).decode()
Q = "Quote the paragraph of the document that starts with 'Statement of Purpose' word for word."
rows = []
for rnd in range(3):
    for mode in (("off", "auto") if rnd % 2 == 0 else ("auto", "off")):
        start = time.monotonic()
        r = httpx.post(f"http://127.0.0.1:{port}/v1/messages", timeout=600, json={
            "model": "x", "max_tokens": 200, "temperature": 0, "speculation": mode,
            "messages": [{"role": "user", "content": [
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": DOC}, "title": "CC0-1.0.txt"},
                {"type": "text", "text": Q}]}]})
        wall = time.monotonic() - start
        body = r.json()
        t = body.get("timings", {})
        rows.append((rnd, mode, r.status_code, body.get("usage", {}).get("input_tokens"), t.get("predicted_n"),
                     t.get("predicted_per_second"), wall, body["content"][0]["text"] if r.status_code == 200 else body))
        print(rows[-1][:7])
texts = {m: {r[7] for r in rows if r[1] == m} for m in ("off", "auto")}
print("auto text == off text:", texts["off"] == texts["auto"] and len(texts["off"]) == 1)
ratios = []
for rnd in range(3):
    off = [r for r in rows if r[0] == rnd and r[1] == "off"][0]; auto = [r for r in rows if r[0] == rnd and r[1] == "auto"][0]
    ratios.append(auto[5] / off[5])
print("Auto/off same-round ratios:", [f"{x:.2f}" for x in ratios], "median", f"{statistics.median(ratios):.2f}")
# the same document as an OpenAI file part
start = time.monotonic()
c = gpt.chat.completions.create(model="x", max_tokens=30, temperature=0, messages=[{"role": "user", "content": [
    {"type": "file", "file": {"filename": "CC0-1.0.txt", "file_data": "data:text/plain;base64," + b64}},
    {"type": "text", "text": "What is this document's title?"}]}])
print(f"file part: {c.usage.prompt_tokens} prompt tokens, {time.monotonic()-start:.1f} s: {c.choices[0].message.content!r}")
buf = io.BytesIO(); Image.new("1", (30000, 30000)).save(buf, "PNG")
start = time.monotonic()
r = httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", timeout=60, json={"model": "x", "max_tokens": 1, "messages": [
    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()}}]}]})
print(f"bomb ({len(buf.getvalue())} bytes, 900 Mpx): {r.status_code} in {time.monotonic()-start:.2f} s: {r.json()['error']['message']}")
srv.terminate(); srv.wait(20); busy.kill()
print("load average", os.getloadavg())
