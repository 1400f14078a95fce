#!/usr/bin/env python3
"""Reference fixtures for zerotrain's GPT-2 from PyTorch.

Builds tiny GPT-2 in PyTorch with exactly zerotrain's initial weights and batch (dumped by the
C++ tool zt_dump_gpt2_init, see tools/dump_gpt2_init.cpp for the format), then writes
tests/models/fixtures/gpt2_tiny.bin with: the logits and loss of the batch, every parameter
gradient (in zerotrain's flat order) and the losses of 10 AdamW steps on the same batch.

PyTorch runs in float64, so the fixture is the exact answer the fp32 C++ code is held against.
AdamW: lr 3e-3, betas (0.9, 0.95), eps 1e-8, weight decay 0.1 on matrices and embeddings only
(biases and LayerNorm parameters do not decay), torch.optim.AdamW semantics. The loss is the
mean cross-entropy over targets != -1.

Usage:  python3 tools/make_gpt2_fixtures.py [--dump-tool build-models/models/zt_dump_gpt2_init]
Creates .venv-fixtures/ with torch from PyPI on first use (big: a few minutes) and re-runs
itself inside it.

Fixture format (little-endian): char[4] "ZTF1"; int32 version = 1; int32 B, T, V (logit row
width = padded vocab); uint64 seed; int64 n_params; int32 tokens[B*T]; int32 targets[B*T];
float32 logits[B*T*V]; float64 loss; float32 grads[n_params]; int32 n_steps; float32 lr, beta1,
beta2, eps, weight_decay; float64 losses[n_steps] (loss before each update).
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv-fixtures"


def ensure_torch():
    try:
        import torch  # noqa: F401
        return
    except ImportError:
        pass
    python = VENV / "bin" / "python"
    if Path(sys.executable).resolve() == python.resolve():
        sys.exit("torch is missing inside .venv-fixtures; pip install -r tools/requirements-fixtures.txt failed?")
    if not python.exists():
        print(f"creating {VENV} and installing torch from PyPI (once; this takes a few minutes)")
        subprocess.check_call([sys.executable, "-m", "venv", str(VENV)])
        subprocess.check_call([str(python), "-m", "pip", "install", "-q", "-r",
                               str(ROOT / "tools" / "requirements-fixtures.txt")])
    os.execv(str(python), [str(python), *sys.argv])


def read_dump(path):
    data = Path(path).read_bytes()
    assert data[:4] == b"ZTG2", "not a zt_dump_gpt2_init file"
    at = 4
    (version,) = struct.unpack_from("<i", data, at); at += 4
    assert version == 1
    L, NH, C, V, Vp, block, B, T = struct.unpack_from("<8i", data, at); at += 32
    (seed,) = struct.unpack_from("<Q", data, at); at += 8
    (n,) = struct.unpack_from("<q", data, at); at += 8
    import numpy as np
    tokens = np.frombuffer(data, np.int32, B * T, at).reshape(B, T); at += 4 * B * T
    targets = np.frombuffer(data, np.int32, B * T, at).reshape(B, T); at += 4 * B * T
    params = np.frombuffer(data, np.float32, n, at); at += 4 * n
    assert at == len(data)
    return dict(L=L, NH=NH, C=C, V=V, Vp=Vp, block=block, B=B, T=T, seed=seed), tokens, targets, params


def param_shapes(cfg):
    """zerotrain's flat order: (name, shape, decays)."""
    C, L = cfg["C"], cfg["L"]
    shapes = [("wte", (cfg["Vp"], C), True), ("wpe", (cfg["block"], C), True)]
    for l in range(L):
        p = f"h{l}."
        shapes += [(p + "ln_1.weight", (C,), False), (p + "ln_1.bias", (C,), False),
                   (p + "attn.c_attn.weight", (3 * C, C), True), (p + "attn.c_attn.bias", (3 * C,), False),
                   (p + "attn.c_proj.weight", (C, C), True), (p + "attn.c_proj.bias", (C,), False),
                   (p + "ln_2.weight", (C,), False), (p + "ln_2.bias", (C,), False),
                   (p + "mlp.c_fc.weight", (4 * C, C), True), (p + "mlp.c_fc.bias", (4 * C,), False),
                   (p + "mlp.c_proj.weight", (C, 4 * C), True), (p + "mlp.c_proj.bias", (C,), False)]
    shapes += [("ln_f.weight", (C,), False), ("ln_f.bias", (C,), False)]
    return shapes


def gpt2_forward(cfg, P, tokens, targets):
    import torch
    import torch.nn.functional as F
    B, T = tokens.shape
    C, NH, V = cfg["C"], cfg["NH"], cfg["V"]
    hs = C // NH
    x = P["wte"][tokens] + P["wpe"][:T]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for l in range(cfg["L"]):
        p = lambda name: P[f"h{l}.{name}"]  # noqa: E731
        h = F.layer_norm(x, (C,), p("ln_1.weight"), p("ln_1.bias"), eps=1e-5)
        qkv = h @ p("attn.c_attn.weight").T + p("attn.c_attn.bias")
        q, k, v = (t.view(B, T, NH, hs).transpose(1, 2) for t in qkv.split(C, dim=2))
        att = (q @ k.transpose(-2, -1)) / (hs ** 0.5)
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + y @ p("attn.c_proj.weight").T + p("attn.c_proj.bias")
        h = F.layer_norm(x, (C,), p("ln_2.weight"), p("ln_2.bias"), eps=1e-5)
        f = F.gelu(h @ p("mlp.c_fc.weight").T + p("mlp.c_fc.bias"), approximate="tanh")
        x = x + f @ p("mlp.c_proj.weight").T + p("mlp.c_proj.bias")
    x = F.layer_norm(x, (C,), P["ln_f.weight"], P["ln_f.bias"], eps=1e-5)
    logits = x @ P["wte"].T  # the LM head is tied to wte
    loss = F.cross_entropy(logits[..., :V].reshape(-1, V), targets.reshape(-1), ignore_index=-1)
    return logits, loss


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dump-tool", default=str(ROOT / "build-models" / "models" / "zt_dump_gpt2_init"))
    ap.add_argument("--init", help="an existing dump instead of running the tool")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--out", default=str(ROOT / "tests" / "models" / "fixtures" / "gpt2_tiny.bin"))
    args = ap.parse_args()
    ensure_torch()
    import numpy as np
    import torch
    torch.set_default_dtype(torch.float64)

    dump = args.init
    if dump is None:
        dump = os.path.join(tempfile.mkdtemp(), "init.bin")
        subprocess.check_call([args.dump_tool, dump, str(args.seed)])
    cfg, tokens_np, targets_np, flat = read_dump(dump)
    tokens = torch.from_numpy(tokens_np.astype(np.int64))
    targets = torch.from_numpy(targets_np.astype(np.int64))

    def fresh_params():
        P, at = {}, 0
        for name, shape, _ in param_shapes(cfg):
            n = int(np.prod(shape))
            P[name] = torch.tensor(flat[at:at + n].astype(np.float64)).view(shape).requires_grad_(True)
            at += n
        assert at == len(flat), "dump does not match the expected GPT-2 layout"
        return P

    order = [name for name, _, _ in param_shapes(cfg)]
    P = fresh_params()
    logits, loss = gpt2_forward(cfg, P, tokens, targets)
    loss.backward()
    grads = torch.cat([P[name].grad.reshape(-1) for name in order])

    lr, b1, b2, eps, wd, steps = 3e-3, 0.9, 0.95, 1e-8, 0.1, 10
    P = fresh_params()
    decay = [P[n] for n, _, d in param_shapes(cfg) if d]
    no_decay = [P[n] for n, _, d in param_shapes(cfg) if not d]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": wd}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=lr, betas=(b1, b2), eps=eps)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        _, step_loss = gpt2_forward(cfg, P, tokens, targets)
        losses.append(step_loss.item())
        step_loss.backward()
        opt.step()

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    B, T, Vp = cfg["B"], cfg["T"], cfg["Vp"]
    with open(out, "wb") as f:
        f.write(b"ZTF1")
        f.write(struct.pack("<4i", 1, B, T, Vp))
        f.write(struct.pack("<Qq", cfg["seed"], len(flat)))
        f.write(tokens_np.astype("<i4").tobytes())
        f.write(targets_np.astype("<i4").tobytes())
        f.write(logits.detach().numpy().astype("<f4").tobytes())
        f.write(struct.pack("<d", loss.item()))
        f.write(grads.numpy().astype("<f4").tobytes())
        f.write(struct.pack("<i5f", steps, lr, b1, b2, eps, wd))
        f.write(np.array(losses, dtype="<f8").tobytes())
    print(f"wrote {out} ({out.stat().st_size} bytes): loss {loss.item():.6f}, "
          f"AdamW losses {losses[0]:.4f} -> {losses[-1]:.4f}, torch {torch.__version__}")


if __name__ == "__main__":
    main()
