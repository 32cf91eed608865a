"""toy-tts's baseline: the same toy language model in PyTorch, same weights, its decode step eager or captured.

The weights and their layout come from io.mstar.bench.tts.ToyTtsExport (weights.f32 and toy_tts.json): one flat
float32 array, each matrix [in, out] at its offset. The model is the Java reference's (HostLmBackend): token
embedding; per layer RMSNorm, q/k/v projections, rotary embedding on adjacent pairs within each head, causal
softmax attention, output projection added to the residual, RMSNorm, SiLU MLP added to the residual; final RMSNorm,
the head times the logit scale plus the per-byte prior. Before timing, the script checks its logits after the
exported prompt against the Java reference's (2e-3 absolute, the CUDA kernels' tolerance) and stops if they differ.

The workload is io.mstar.bench.tts.ResidentDecodeSteps': per batch size B, B prompts of --prompt-bytes bytes are
prefilled, then one warm-up round and --rounds timed rounds of --steps decode steps each, the requests staying in
the batch (contexts grow to prompt + (rounds + 1) * steps); a step embeds each request's token, runs the layers
over a contiguous KV cache, samples at temperature 0.8 from the top 40 (Gumbel-max on device, EOS masked) and feeds
the sample back. --mode graph captures one decode step in a CUDA graph and replays it (positions, tokens and the
cache are static tensors the step updates in place). Reports the best round's µs per step, timed with CUDA events.

    python3 benchmarks/python/toy_tts_torch.py --export DIR [--batches 1,2,4,8,16,32] [--steps 128] [--rounds 5]
        [--prompt-bytes 32] [--mode eager|graph] [--device cuda]
"""
import argparse
import json
import math
import os

import numpy as np
import torch


def load(export, device):
    meta = json.load(open(os.path.join(export, "toy_tts.json")))
    flat = torch.from_numpy(np.fromfile(os.path.join(export, "weights.f32"), dtype="<f4").copy())
    o, d, ffn, vocab = meta["offsets"], meta["d"], meta["ffn"], meta["vocab"]
    assert flat.numel() == o["total"], (flat.numel(), o["total"])

    def m(at, rows, cols):
        return flat[at:at + rows * cols].view(rows, cols).to(device)

    def v(at, n):
        return flat[at:at + n].to(device)

    half = d // meta["heads"] // 2
    w = {"embedding": m(o["embedding"], vocab, d), "final_norm": v(o["final_norm"], d),
         "head": m(o["head"], d, vocab), "prior": v(o["byte_prior"], vocab), "inv_freq": v(o["inv_freq"], half),
         "layers": []}
    for l in range(meta["layers"]):
        w["layers"].append({"attn_norm": v(o["attn_norm"][l], d), "wq": m(o["wq"][l], d, d),
                            "wk": m(o["wk"][l], d, d), "wv": m(o["wv"][l], d, d), "wo": m(o["wo"][l], d, d),
                            "mlp_norm": v(o["mlp_norm"][l], d), "w1": m(o["w1"][l], d, ffn),
                            "w2": m(o["w2"][l], ffn, d)})
    return meta, w


class ToyLm:
    """Batched decode over a contiguous cache [layers, 2, batch, heads, max_len, head_dim]."""

    def __init__(self, meta, w, batch, max_len, device):
        self.meta, self.w = meta, w
        self.heads = meta["heads"]
        self.hd = meta["d"] // self.heads
        self.cache = torch.zeros(meta["layers"], 2, batch, self.heads, max_len, self.hd, device=device)
        self.positions = torch.arange(max_len, device=device)

    def rms(self, x, gain):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + self.meta["norm_eps"]) * gain

    def rope(self, x, pos):
        # x [batch, heads, hd], pos [batch]: rotate adjacent pairs (2i, 2i+1) by pos * inv_freq[i]
        angle = pos.float()[:, None] * self.w["inv_freq"][None, :]
        c, s = torch.cos(angle)[:, None, :], torch.sin(angle)[:, None, :]
        x0, x1 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).flatten(-2)

    def step(self, tokens, pos):
        """One token per request at position pos[b]; answers the logits [batch, vocab]."""
        b = tokens.shape[0]
        x = self.w["embedding"][tokens]
        rows = torch.arange(b, device=tokens.device)
        visible = self.positions[None, :] <= pos[:, None]  # [batch, max_len]
        for l, lw in enumerate(self.w["layers"]):
            h = self.rms(x, lw["attn_norm"])
            q = self.rope((h @ lw["wq"]).view(b, self.heads, self.hd), pos)
            k = self.rope((h @ lw["wk"]).view(b, self.heads, self.hd), pos)
            v = (h @ lw["wv"]).view(b, self.heads, self.hd)
            self.cache[l, 0, rows, :, pos] = k
            self.cache[l, 1, rows, :, pos] = v
            scores = torch.einsum("bhd,bhtd->bht", q, self.cache[l, 0]) / math.sqrt(self.hd)
            scores = scores.masked_fill(~visible[:, None, :], float("-inf"))
            att = torch.einsum("bht,bhtd->bhd", torch.softmax(scores, -1), self.cache[l, 1])
            x = x + att.reshape(b, -1) @ lw["wo"]
            h = self.rms(x, lw["mlp_norm"])
            u = h @ lw["w1"]
            x = x + (u * torch.sigmoid(u)) @ lw["w2"]
        return self.meta["logit_scale"] * (self.rms(x, self.w["final_norm"]) @ self.w["head"]) + self.w["prior"]

    def prefill(self, prompts):
        """prompts [batch, n]: fed one position at a time (the timed part is decode)."""
        pos = torch.zeros(prompts.shape[0], dtype=torch.long, device=prompts.device)
        logits = None
        for t in range(prompts.shape[1]):
            logits = self.step(prompts[:, t], pos + t)
        return logits


def sample(logits, eos, temperature=0.8, top_k=40):
    logits = logits.clone()
    logits[:, eos] = float("-inf")
    top, ids = torch.topk(logits / temperature, top_k, dim=-1)
    gumbel = -torch.log(-torch.log(torch.rand_like(top).clamp_min(1e-20)))
    return ids.gather(-1, (top + gumbel).argmax(-1, keepdim=True)).squeeze(-1)


def check(meta, w, device):
    prompt = torch.tensor([meta["check_prompt"]], device=device)
    lm = ToyLm(meta, w, 1, prompt.shape[1], device)
    got = lm.prefill(prompt)[0].cpu()
    # JSON has no infinity: the reference writes "-Infinity" for the logit the prior masks (BOS)
    want = torch.tensor([float(x) for x in meta["check_logits"]])
    same_inf = torch.isinf(got) & torch.isinf(want) & (torch.sign(got) == torch.sign(want))
    if (torch.isinf(got) | torch.isinf(want)).ne(same_inf).any():
        raise SystemExit("the PyTorch model's infinite logits are not the Java one's")
    worst = (got - want).abs().masked_fill(same_inf, 0).max().item()
    print(f"check: logits after the exported prompt within {worst:.2e} of the Java reference")
    if worst > 2e-3:
        raise SystemExit(f"the PyTorch model is not the Java one: {worst} > 2e-3")


def run(meta, w, batch, args, device):
    max_len = args.prompt_bytes + (args.rounds + 1) * args.steps + 8  # graph mode: 3 more for the warm-up steps
    lm = ToyLm(meta, w, batch, max_len, device)
    prompts = torch.tensor([[ord("a") + (i * 7 + r) % 26 for i in range(args.prompt_bytes)] for r in range(batch)],
                           device=device)
    feed = torch.cat([torch.full((batch, 1), 256, device=device), prompts[:, :-1]], dim=1)
    lm.prefill(feed)
    tokens = prompts[:, -1].clone()
    pos = torch.full((batch,), args.prompt_bytes, dtype=torch.long, device=device)

    def one():
        nxt = sample(lm.step(tokens, pos), meta["eos"])
        tokens.copy_(nxt)
        pos.add_(1)

    if args.mode == "graph":
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):  # warm-up on a side stream, as torch.cuda.graph asks
                one()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            one()
        step = graph.replay
        # the warm-up ran 3 real steps (pos moved on); the capture only recorded one
    else:
        step = one
    best = float("inf")
    for r in range(args.rounds + 1):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(args.steps):
            step()
        end.record()
        torch.cuda.synchronize()
        if r > 0:
            best = min(best, start.elapsed_time(end) * 1000 / args.steps)
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--export", required=True)
    p.add_argument("--batches", default="1,2,4,8,16,32")
    p.add_argument("--steps", type=int, default=128)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--prompt-bytes", type=int, default=32)
    p.add_argument("--mode", choices=["eager", "graph"], default="eager")
    p.add_argument("--device", default="cuda")
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device(args.device)
    meta, w = load(args.export, device)
    check(meta, w, device)
    print(f"toy-tts in PyTorch {torch.__version__}, {args.mode}, {torch.cuda.get_device_name(device)}, "
          f"{args.steps} steps per round, best of {args.rounds}")
    print("| batch | µs per step |")
    print("|---:|---:|")
    with torch.no_grad():
        for b in [int(x) for x in args.batches.split(",")]:
            print(f"| {b} | {run(meta, w, b, args, device):.1f} |", flush=True)


if __name__ == "__main__":
    main()
