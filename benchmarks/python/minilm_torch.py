"""minilm-embed's baseline: all-MiniLM-L6-v2 in PyTorch eager on the same weights and the same batch.

The weights are read from the ONNX file's initializers with the `onnx` package and mapped exactly as the Java
reader maps them (named biases and LayerNorms; the anonymous MatMul weights by the MatMul output they produce,
already [in, out]). The batch is the one io.mstar.bench.minilm.MiniLmThroughput builds:
[CLS], 1000 + (b * 131 + t * 17) % 20000 ..., [SEP]. FP32 with TF32 off (the Java side's FP32 products),
or everything in BF16 (--dtype bf16); eager ops, or the forward pass captured once in a CUDA graph and replayed
(--mode graph, the ids copied into the captured input first). Timed with CUDA events after warm-up.

    python3 benchmarks/python/minilm_torch.py --onnx all-minilm-l6-v2.onnx [--iterations 50] [--batch 32]
        [--tokens 128] [--device cuda] [--mode eager|graph] [--dtype fp32|bf16]
"""
import argparse
import math

import numpy as np
import onnx
import torch
from onnx import numpy_helper

HIDDEN, LAYERS, HEADS, EPS = 384, 6, 12, 1e-12


def load(path, device, dtype):
    model = onnx.load(path)
    init = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy()) for t in model.graph.initializer}
    matmul = {}
    for node in model.graph.node:
        if node.op_type == "MatMul" and len(node.input) > 1 and node.input[1] in init:
            matmul[node.output[0]] = init[node.input[1]]
    w = {"word": init["embeddings.word_embeddings.weight"], "pos": init["embeddings.position_embeddings.weight"],
         "type": init["embeddings.token_type_embeddings.weight"][0],
         "emb_g": init["embeddings.LayerNorm.weight"], "emb_b": init["embeddings.LayerNorm.bias"], "layers": []}
    for l in range(LAYERS):
        p, m = f"encoder.layer.{l}.", f"/encoder/layer.{l}/"
        w["layers"].append({
            "q": matmul[m + "attention/self/query/MatMul_output_0"], "qb": init[p + "attention.self.query.bias"],
            "k": matmul[m + "attention/self/key/MatMul_output_0"], "kb": init[p + "attention.self.key.bias"],
            "v": matmul[m + "attention/self/value/MatMul_output_0"], "vb": init[p + "attention.self.value.bias"],
            "o": matmul[m + "attention/output/dense/MatMul_output_0"], "ob": init[p + "attention.output.dense.bias"],
            "ln1g": init[p + "attention.output.LayerNorm.weight"], "ln1b": init[p + "attention.output.LayerNorm.bias"],
            "up": matmul[m + "intermediate/dense/MatMul_output_0"], "upb": init[p + "intermediate.dense.bias"],
            "down": matmul[m + "output/dense/MatMul_output_0"], "downb": init[p + "output.dense.bias"],
            "ln2g": init[p + "output.LayerNorm.weight"], "ln2b": init[p + "output.LayerNorm.bias"],
        })

    def move(x):
        if isinstance(x, dict):
            return {k: move(v) for k, v in x.items()}
        if isinstance(x, list):
            return [move(v) for v in x]
        return x.to(device=device, dtype=dtype)
    return move(w)


def batch(sentences, tokens):
    ids = np.zeros((sentences, tokens), dtype=np.int64)
    for b in range(sentences):
        ids[b, 0] = 101
        for t in range(1, tokens - 1):
            ids[b, t] = 1000 + (b * 131 + t * 17) % 20000
        ids[b, tokens - 1] = 102
    return torch.from_numpy(ids)


def forward(w, ids, mask):
    n, t = ids.shape
    hd = HIDDEN // HEADS
    x = w["word"][ids] + w["pos"][:t].unsqueeze(0) + w["type"]
    x = torch.nn.functional.layer_norm(x, (HIDDEN,), w["emb_g"], w["emb_b"], EPS)
    bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
    for l in w["layers"]:
        q = (x @ l["q"] + l["qb"]).view(n, t, HEADS, hd).transpose(1, 2)
        k = (x @ l["k"] + l["kb"]).view(n, t, HEADS, hd).transpose(1, 2)
        v = (x @ l["v"] + l["vb"]).view(n, t, HEADS, hd).transpose(1, 2)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd) + bias
        ctx = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(n, t, HIDDEN)
        x = torch.nn.functional.layer_norm(ctx @ l["o"] + l["ob"] + x, (HIDDEN,), l["ln1g"], l["ln1b"], EPS)
        h = torch.nn.functional.gelu(x @ l["up"] + l["upb"])
        x = torch.nn.functional.layer_norm(h @ l["down"] + l["downb"] + x, (HIDDEN,), l["ln2g"], l["ln2b"], EPS)
    m = mask.unsqueeze(-1).to(x.dtype)
    pooled = (x * m).sum(1) / m.sum(1)
    return torch.nn.functional.normalize(pooled, p=2, dim=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--mode", choices=["eager", "graph"], default="eager")
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device(a.device)
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float32
    w = load(a.onnx, dev, dtype)
    ids_host = batch(a.batch, a.tokens)
    with torch.inference_mode():
        if a.mode == "graph":
            # captured once on the device's ids; each step copies the batch's ids in, replays, reads the result
            static_ids = ids_host.to(dev)
            static_mask = torch.ones_like(static_ids)
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    forward(w, static_ids, static_mask)
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_out = forward(w, static_ids, static_mask)

            def step():
                static_ids.copy_(ids_host)
                graph.replay()
                return static_out.float().cpu()
        else:
            def step():
                # same work as the Java call: ids up, forward, pooled embeddings back
                ids = ids_host.to(dev)
                mask = torch.ones_like(ids)
                return forward(w, ids, mask).float().cpu()
        out = None
        for _ in range(a.warmup):
            out = step()
        if dev.type == "cuda":
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(a.iterations):
                out = step()
            end.record()
            torch.cuda.synchronize()
            ms = start.elapsed_time(end) / a.iterations
        else:
            import time
            t0 = time.perf_counter()
            for _ in range(a.iterations):
                out = step()
            ms = (time.perf_counter() - t0) * 1000 / a.iterations
    print(f"minilm-embed torch/{dev.type} {a.dtype} {a.mode}: batch {a.batch} x {a.tokens} tokens, "
          f"{a.iterations} iterations: {ms:.3f} ms/batch, {a.batch * 1000 / ms:.1f} sentences/s; "
          f"first embedding[0:4] = {[round(float(v), 6) for v in out[0, :4]]}")


if __name__ == "__main__":
    main()
