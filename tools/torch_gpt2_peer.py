#!/usr/bin/env python3
"""zerotrain's GPT-2 job in PyTorch: the peer that bench/perf_peer.py runs side by side.

One process per rank (start it with mpirun or torchrun). It trains the same GPT-2 as zerotrain —
tied wte, pre-LN, GELU (tanh), LayerNorm eps 1e-5, fp32 on CPU — from *zerotrain's own initial
weights*, on *zerotrain's own batches*, so the losses of the first steps agree to rounding:

  * initial weights: zerotrain's init (models/init.cpp) reproduced exactly — std::mt19937_64 per
    block seeded by block_seed(seed, block), Box-Muller in double, one rounding to fp32;
    `--check-init DUMP` holds the result against a zt_dump_gpt2_init file bit for bit.
  * batches: zerotrain's TokenLoader (runtime/data/token_loader.cpp) reproduced — llm.c shards
    (256 x int32 header, uint16 tokens), windows of T+1 tokens, SplitMix64 Fisher-Yates shard and
    window orders per epoch, rank r reads rows [pos + r*B, pos + (r+1)*B) of each global batch.
  * optimizer: AdamW (torch.optim.AdamW semantics, which zerotrain's matches), weight decay on
    matrices and embeddings only, global-norm clipping with coefficient max/(norm + 1e-6), and
    zerotrain's warmup_cosine / warmup_linear / constant schedule (steps counted from 1).

Modes: `ddp` — DistributedDataParallel (gloo, bucket_cap_mb as given) + AdamW on every rank;
`zero` — DDP for the gradient all-reduce + torch.distributed.optim.ZeroRedundancyOptimizer (AdamW
state sharded over ranks, updated parameters broadcast: PyTorch's ZeRO stage 1); `deepspeed` —
DeepSpeed's engine at --zero-stage (overlap_comm, the same bucket sizes, torch's AdamW as the client
optimizer, DeepSpeed's gradient_clipping), over gloo; `fsdp2` — PyTorch's fully_shard on every block
and on the root (parameters, gradients and AdamW state sharded: the peer of ZeRO stage 3), over gloo.
The model is one module per transformer block, so the sharding systems work layer by layer.

Precision (--precision): fp32; bf16 or fp16 with zerotrain's mixed-precision semantics (16-bit
parameters cast from fp32 master weights after every step, every op computing in fp32 on its 16-bit
inputs and rounding what it stores once, 16-bit parameter gradients accumulated into fp32, fp32
all-reduce, clipping and torch.optim.AdamW on the masters, fp16 with zerotrain's dynamic loss
scaling); or autocast-bf16, PyTorch's own CPU mixed precision (torch.autocast over the fp32 model),
the speed peer of zerotrain's bf16. The 16-bit modes run with --mode ddp.

Rank 0 writes one JSON object per step to --out: step, loss (mean over ranks), step_ms,
tokens_per_s — the fields zerotrain's metrics.jsonl has.

Rendezvous: torchrun's env (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) or Open MPI's
(OMPI_COMM_WORLD_RANK/SIZE) with --master-addr/--master-port.
"""
import argparse
import glob
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F

MASK64 = (1 << 64) - 1

# ---- zerotrain's random streams ---------------------------------------------------------------


class MT19937_64:
    """std::mt19937_64, 312 outputs at a time (the standard fixes its output sequence)."""
    N, M = 312, 156

    def __init__(self, seed):
        mt = [seed & MASK64]
        for i in range(1, self.N):
            prev = mt[-1]
            mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & MASK64)
        self.mt = np.array(mt, dtype=np.uint64)

    def block(self):
        mt, N, M = self.mt, self.N, self.M
        um, lm = np.uint64(0xFFFFFFFF80000000), np.uint64(0x7FFFFFFF)
        a, one, zero = np.uint64(0xB5026F5AA96619E9), np.uint64(1), np.uint64(0)

        def twist(x):
            return (x >> one) ^ np.where((x & one) == one, a, zero)
        x = (mt[0:N - M] & um) | (mt[1:N - M + 1] & lm)
        mt[0:N - M] = mt[M:N] ^ twist(x)
        x = (mt[N - M:N - 1] & um) | (mt[N - M + 1:N] & lm)
        mt[N - M:N - 1] = mt[0:M - 1] ^ twist(x)
        x = (mt[N - 1:N] & um) | (mt[0:1] & lm)
        mt[N - 1:N] = mt[M - 1:M] ^ twist(x)
        y = mt.copy()
        y ^= (y >> np.uint64(29)) & np.uint64(0x5555555555555555)
        y ^= (y << np.uint64(17)) & np.uint64(0x71D67FFFEDA60000)
        y ^= (y << np.uint64(37)) & np.uint64(0xFFF7EEE000000000)
        y ^= y >> np.uint64(43)
        return y

    def take(self, count):
        out = [self.block() for _ in range((count + self.N - 1) // self.N)]
        return np.concatenate(out)[:count] if out else np.zeros(0, np.uint64)


def splitmix_mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def block_seed(seed, block):
    return splitmix_mix((seed + 0x9E3779B97F4A7C15 * (block + 1)) & MASK64)


def normals(seed, count):
    """NormalGenerator(seed).next() `count` times: Box-Muller pairs (cos first, then sin)."""
    pairs = (count + 1) // 2
    raw = MT19937_64(seed).take(2 * pairs)
    u = 1.0 - (raw >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    # math (glibc libm, as the C++ uses) rather than numpy's vectorised kernels: bit-exact.
    out = np.empty(2 * pairs, np.float64)
    two_pi = 2.0 * math.pi
    for i in range(pairs):
        r = math.sqrt(-2.0 * math.log(u[2 * i]))
        theta = two_pi * u[2 * i + 1]
        out[2 * i] = r * math.cos(theta)
        out[2 * i + 1] = r * math.sin(theta)
    return out[:count]


def param_layout(L, C, V, block):
    """zerotrain's blocks: [(tensor name, shape, init, std, decays)], init in normal/zeros/ones."""
    std = np.float32(0.02)
    proj = np.float32(std / np.sqrt(np.float32(2.0 * L), dtype=np.float32))
    blocks = [[("wte", (V, C), "normal", std, True), ("wpe", (block, C), "normal", std, True)]]
    for l in range(L):
        p = f"h{l}."
        blocks.append([(p + "ln_1.weight", (C,), "ones", 0, False), (p + "ln_1.bias", (C,), "zeros", 0, False),
                       (p + "attn.c_attn.weight", (3 * C, C), "normal", std, True),
                       (p + "attn.c_attn.bias", (3 * C,), "zeros", 0, False),
                       (p + "attn.c_proj.weight", (C, C), "normal", proj, True),
                       (p + "attn.c_proj.bias", (C,), "zeros", 0, False),
                       (p + "ln_2.weight", (C,), "ones", 0, False), (p + "ln_2.bias", (C,), "zeros", 0, False),
                       (p + "mlp.c_fc.weight", (4 * C, C), "normal", std, True),
                       (p + "mlp.c_fc.bias", (4 * C,), "zeros", 0, False),
                       (p + "mlp.c_proj.weight", (C, 4 * C), "normal", proj, True),
                       (p + "mlp.c_proj.bias", (C,), "zeros", 0, False)])
    blocks.append([("ln_f.weight", (C,), "ones", 0, False), ("ln_f.bias", (C,), "zeros", 0, False)])
    return blocks


def zerotrain_init(L, C, V, block, seed):
    """{name: float32 array} equal to zerotrain's init_parameters(seed), and the flat order."""
    params, order = {}, []
    for b, tensors in enumerate(param_layout(L, C, V, block)):
        need = sum(int(np.prod(s)) for _, s, kind, _, _ in tensors if kind == "normal")
        z = normals(block_seed(seed, b), need)
        at = 0
        for name, shape, kind, std, _ in tensors:
            n = int(np.prod(shape))
            if kind == "normal":
                values = (z[at:at + n] * float(std)).astype(np.float32)
                at += n
            else:
                values = np.full(n, 1.0 if kind == "ones" else 0.0, np.float32)
            params[name] = values.reshape(shape)
            order.append(name)
    return params, order


def check_init(dump_path):
    data = open(dump_path, "rb").read()
    assert data[:4] == b"ZTG2"
    L, NH, C, V, Vp, block, B, T = np.frombuffer(data, np.int32, 8, 8)
    seed = int(np.frombuffer(data, np.uint64, 1, 40)[0])
    n = int(np.frombuffer(data, np.int64, 1, 48)[0])
    flat = np.frombuffer(data, np.float32, n, 56 + 8 * B * T)
    params, order = zerotrain_init(int(L), int(C), int(Vp), int(block), seed)
    mine = np.concatenate([params[k].reshape(-1) for k in order])
    diff = int(np.count_nonzero(mine.view(np.uint32) != flat.view(np.uint32)))
    print(f"init check against {dump_path}: {n} parameters, {diff} differ bitwise")
    return diff == 0


# ---- zerotrain's batches ----------------------------------------------------------------------


class SplitMix64:
    def __init__(self, state):
        self.state = state & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        return splitmix_mix(self.state)

    def below(self, bound):
        threshold = ((1 << 64) - bound) % bound
        while True:
            v = self.next()
            if v >= threshold:
                return v % bound


def derive_seed(parent, stream):
    m = SplitMix64(parent ^ ((stream * 0xD1B54A32D192ED03) & MASK64))
    m.next()
    return m.next()


def shuffled(n, seed):
    values = list(range(n))
    rnd = SplitMix64(seed)
    for i in range(n, 1, -1):
        j = rnd.below(i)
        values[i - 1], values[j] = values[j], values[i - 1]
    return values


class TokenLoader:
    """runtime/data/token_loader.cpp, shuffled order."""

    def __init__(self, pattern, B, T, rank, world, seed):
        self.files = sorted(glob.glob(pattern))
        if not self.files:
            sys.exit(f"torch_gpt2_peer: no shard files match {pattern}")
        self.shards = []
        for path in self.files:
            header = np.fromfile(path, np.int32, 256)
            assert header[0] == 20240520 and header[1] == 1, f"{path}: not an llm.c token shard"
            self.shards.append(np.fromfile(path, np.uint16, int(header[2]), offset=1024).astype(np.int64))
        self.B, self.T, self.rank, self.world, self.seed = B, T, rank, world, seed
        self.windows = [(len(s) - 1) // T if len(s) else 0 for s in self.shards]
        self.total = sum(self.windows)
        self.epoch, self.pos, self.prepared = 0, 0, None
        self.prepare(0)

    def prepare(self, epoch):
        if epoch == self.prepared:
            return
        self.order = shuffled(len(self.shards), derive_seed(derive_seed(self.seed, epoch), 0))
        self.starts, start = [], 0
        for s in self.order:
            self.starts.append(start)
            start += self.windows[s]
        self.prepared, self.perm_shard = epoch, None

    def locate(self, index):
        i = max(k for k, s in enumerate(self.starts) if s <= index)
        shard = self.order[i]
        if self.perm_shard != shard:
            self.perm = shuffled(self.windows[shard], derive_seed(derive_seed(self.seed, self.prepared), 1 + shard))
            self.perm_shard = shard
        return shard, self.perm[index - self.starts[i]]

    def next(self):
        B, T = self.B, self.T
        if self.pos + self.world * B > self.total:
            self.epoch, self.pos = self.epoch + 1, 0
        self.prepare(self.epoch)
        x = np.empty((B, T), np.int64)
        y = np.empty((B, T), np.int64)
        first = self.pos + self.rank * B
        for b in range(B):
            shard, window = self.locate(first + b)
            tokens = self.shards[shard][window * T: window * T + T + 1]
            x[b], y[b] = tokens[:-1], tokens[1:]
        self.pos += self.world * B
        return torch.from_numpy(x), torch.from_numpy(y)


# ---- the model ----------------------------------------------------------------------------------


def _parameters(init, names):
    """A ParameterDict of init's `names` (ParameterDict keys cannot hold dots)."""
    return torch.nn.ParameterDict({n.replace(".", "_"): torch.nn.Parameter(torch.from_numpy(init[n].copy()))
                                   for n in names})


def _identity(t):
    return t


class Block(torch.nn.Module):
    """One transformer layer: a module of its own so that FSDP2 shards, gathers and frees its
    parameters layer by layer, as zerotrain's stage 3 does. Its forward reads them from a child
    ParameterDict whose own forward never runs: DeepSpeed's stage 3 finds them at the first step
    (as parameters a module uses from a submodule) and gathers them with the block from then on."""

    def __init__(self, init, prefix, NH, C):
        super().__init__()
        self.NH, self.C, self.prefix = NH, C, prefix
        self.p = _parameters(init, [n for n in init if n.startswith(prefix)])

    def forward(self, x, P=None, load=_identity, store=_identity):
        B, T, _ = x.shape
        C, NH = self.C, self.NH

        def p(n):
            return load(P(self.prefix + n) if P is not None else self.p[(self.prefix + n).replace(".", "_")])
        h = store(F.layer_norm(load(x), (C,), p("ln_1.weight"), p("ln_1.bias"), eps=1e-5))
        qkv = store(F.linear(load(h), p("attn.c_attn.weight"), p("attn.c_attn.bias")))
        q, k, v = (load(t).view(B, T, NH, C // NH).transpose(1, 2) for t in qkv.split(C, dim=2))
        y = store(F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C))
        x = store(load(x) + load(store(F.linear(load(y), p("attn.c_proj.weight"), p("attn.c_proj.bias")))))
        h = store(F.layer_norm(load(x), (C,), p("ln_2.weight"), p("ln_2.bias"), eps=1e-5))
        pre = store(F.linear(load(h), p("mlp.c_fc.weight"), p("mlp.c_fc.bias")))
        act = store(F.gelu(load(pre), approximate="tanh"))
        return store(load(x) + load(store(F.linear(load(act), p("mlp.c_proj.weight"), p("mlp.c_proj.bias")))))


class GPT2(torch.nn.Module):
    """The embeddings (wte, wpe) and the final LayerNorm belong to the root module, one Block per
    layer; parameters() yields them in zerotrain's order (wte, wpe, h0..h(L-1), ln_f), the order
    `names` lists."""

    def __init__(self, L, NH, C, V, block, init):
        super().__init__()
        self.L, self.NH, self.C, self.V = L, NH, C, V
        self.names = list(init)
        self.embed = _parameters(init, ["wte", "wpe"])
        self.h = torch.nn.ModuleList(Block(init, f"h{l}.", NH, C) for l in range(L))
        self.final = _parameters(init, ["ln_f.weight", "ln_f.bias"])

    def P(self, name):
        """The parameter called `name` in zerotrain's naming (looked up each time: FSDP2 replaces them)."""
        if name.startswith("h") and name[1].isdigit():
            layer = int(name[1:name.index(".")])
            return self.h[layer].p[name.replace(".", "_")]
        return (self.embed if name in ("wte", "wpe") else self.final)[name.replace(".", "_")]

    def forward(self, idx, targets, params=None, dtype=None):
        """The loss. With `params` (16-bit copies of the parameters, by name) and their `dtype`, every op
        follows zerotrain's 16-bit contract: it reads 16-bit tensors, computes in fp32 and rounds what it
        stores once; the loss is computed in fp32 from the 16-bit logits. Without them, plain fp32."""
        T = idx.shape[1]
        C = self.C
        P = (lambda name: params[name]) if params is not None else None
        get = P or self.P
        if dtype is None:
            load = store = _identity  # fp32: one code path, no casts
        else:
            load, store = (lambda t: t.float()), (lambda t: t.to(dtype))
        x = store(load(get("wte"))[idx] + load(get("wpe"))[:T])
        for block in self.h:
            x = block(x, P, load, store)  # through the module's __call__: FSDP2's and DeepSpeed's hooks run
        x = store(F.layer_norm(load(x), (C,), load(get("ln_f.weight")), load(get("ln_f.bias")), eps=1e-5))
        logits = store(F.linear(load(x), load(get("wte"))))  # LM head tied to wte
        return F.cross_entropy(load(logits)[..., :self.V].reshape(-1, self.V), targets.reshape(-1))


class LossScaler:
    """zerotrain's fp16 dynamic loss scaling (optim/loss_scaler.cpp, DeepSpeed's rule): skip an
    overflowing step, halve the scale once `hysteresis` overflows have been absorbed, double it after
    `window` clean steps."""

    def __init__(self, power, window, hysteresis, min_scale):
        self.scale, self.window, self.hysteresis, self.min_scale = 2.0 ** power, window, hysteresis, min_scale
        self.hysteresis_left, self.iteration, self.last_overflow, self.skipped = hysteresis, 0, -1, 0

    def update(self, overflow):
        if overflow:
            self.skipped += 1
            if self.hysteresis_left <= 1:
                self.scale = max(self.scale / 2.0, self.min_scale)
            else:
                self.hysteresis_left -= 1
            self.last_overflow = self.iteration
        else:
            stable = self.iteration - self.last_overflow - 1
            if stable > 0 and stable % self.window == 0:
                self.hysteresis_left = self.hysteresis
                self.scale *= 2.0
        self.iteration += 1


def lr_at(step, args):
    if args.schedule == "constant":
        return args.lr
    if step <= args.warmup_steps:
        return args.lr * step / args.warmup_steps
    decay = max(1, args.total_steps - args.warmup_steps)
    progress = min(max((step - args.warmup_steps) / decay, 0.0), 1.0)
    shape = 0.5 * (1.0 + math.cos(math.pi * progress)) if args.schedule == "warmup_cosine" else 1.0 - progress
    return args.min_lr + (args.lr - args.min_lr) * shape


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check-init", metavar="DUMP", help="compare the init with a zt_dump_gpt2_init file and exit")
    ap.add_argument("--mode", choices=["ddp", "zero", "deepspeed", "fsdp2"], default="ddp")
    ap.add_argument("--zero-stage", type=int, default=1, help="--mode deepspeed: DeepSpeed's ZeRO stage (0-3)")
    ap.add_argument("--prefetch-elements", type=int, default=15000000,
                    help="--mode deepspeed, stage 3: stage3_prefetch_bucket_size (zerotrain's default)")
    ap.add_argument("--persistence-elements", type=int, default=100000,
                    help="--mode deepspeed, stage 3: stage3_param_persistence_threshold (zerotrain's default)")
    ap.add_argument("--n-layer", type=int, default=2)
    ap.add_argument("--n-head", type=int, default=4)
    ap.add_argument("--n-embd", type=int, default=64)
    ap.add_argument("--vocab-size", type=int, default=256)
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--seq-len", type=int, default=0, help="0 = block size")
    ap.add_argument("--micro-batch", type=int, default=4)
    ap.add_argument("--init-seed", type=int, default=42)
    ap.add_argument("--data-seed", type=int, default=1234)
    ap.add_argument("--train-files", default="data/fortunes/train_*.bin")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--total-steps", type=int, default=0, help="the schedule's length (0 = --steps)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--min-lr", type=float, default=1e-4)
    ap.add_argument("--warmup-steps", type=int, default=20)
    ap.add_argument("--schedule", default="warmup_cosine", choices=["warmup_cosine", "warmup_linear", "constant"])
    ap.add_argument("--betas", default="0.9,0.95")
    ap.add_argument("--eps", type=float, default=1e-8)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--bucket-cap-mb", type=float, default=25.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--master-addr", default=os.environ.get("MASTER_ADDR", "127.0.0.1"))
    ap.add_argument("--master-port", default=os.environ.get("MASTER_PORT", "29533"))
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16", "autocast-bf16"])
    ap.add_argument("--loss-scale-power", type=int, default=16, help="fp16: the first scale is 2^this")
    ap.add_argument("--loss-scale-window", type=int, default=1000)
    ap.add_argument("--hysteresis", type=int, default=2)
    ap.add_argument("--min-loss-scale", type=float, default=1.0)
    ap.add_argument("--out", help="rank 0 writes per-step JSON lines here")
    args = ap.parse_args()
    if args.check_init:
        sys.exit(0 if check_init(args.check_init) else 1)
    args.total_steps = args.total_steps or args.steps
    T = args.seq_len or args.block_size
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

    rank = int(os.environ.get("RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0")))
    world = int(os.environ.get("WORLD_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "1")))
    dist.init_process_group("gloo", init_method=f"tcp://{args.master_addr}:{args.master_port}",
                            rank=rank, world_size=world)

    init, _ = zerotrain_init(args.n_layer, args.n_embd, args.vocab_size, args.block_size, args.init_seed)
    model = GPT2(args.n_layer, args.n_head, args.n_embd, args.vocab_size, args.block_size, init)
    forward_module = (torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=args.bucket_cap_mb)
                      if args.mode in ("ddp", "zero") else model)
    if args.mode == "fsdp2":
        # PyTorch's FSDP2: each block's parameters sharded over the ranks, gathered for its forward and
        # again for its backward, gradients reduce-scattered per block; the root group holds wte, wpe
        # and ln_f (wte is tied to the head, so it stays with the root). Granularity is the module:
        # FSDP2 has no bucket size.
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard
        mesh = init_device_mesh("cpu", (world,))
        for block in model.h:
            fully_shard(block, mesh=mesh)
        fully_shard(model, mesh=mesh)
    decay = [model.P(n) for n in model.names if n.endswith("weight") and model.P(n).dim() == 2 or n in ("wte", "wpe")]
    no_decay = [model.P(n) for n in model.names if not (n.endswith("weight") and model.P(n).dim() == 2 or
                                                        n in ("wte", "wpe"))]
    groups = [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    betas = tuple(float(b) for b in args.betas.split(","))
    engine = None
    if args.mode == "deepspeed":
        # DeepSpeed's engine in place of DDP: its ZeRO stage partitions optimizer state, gradients
        # and (stage 3) parameters over gloo; the client AdamW is torch's (DeepSpeed's own FusedAdam
        # needs a GPU); clipping is DeepSpeed's gradient_clipping.
        import deepspeed
        bucket = int(args.bucket_cap_mb * 2**20 / 4)
        config = {"train_micro_batch_size_per_gpu": args.micro_batch, "gradient_accumulation_steps": 1,
                  "gradient_clipping": args.clip, "zero_allow_untested_optimizer": True, "steps_per_print": 10**9,
                  "zero_optimization": {"stage": args.zero_stage, "overlap_comm": True, "contiguous_gradients": True,
                                        "reduce_bucket_size": bucket, "allgather_bucket_size": bucket,
                                        "stage3_prefetch_bucket_size": args.prefetch_elements,
                                        "stage3_param_persistence_threshold": args.persistence_elements}}
        engine, opt, _, _ = deepspeed.initialize(model=model, optimizer=torch.optim.AdamW(
            groups, lr=args.lr, betas=betas, eps=args.eps), config=config)
    elif args.mode in ("ddp", "fsdp2"):  # FSDP2: AdamW on each rank's shards
        opt = torch.optim.AdamW(groups, lr=args.lr, betas=betas, eps=args.eps)
    else:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(decay, optimizer_class=torch.optim.AdamW, lr=args.lr, betas=betas,
                                      eps=args.eps, weight_decay=args.weight_decay)
        opt.add_param_group({"params": no_decay, "weight_decay": 0.0})
    loader = TokenLoader(args.train_files, args.micro_batch, T, rank, world, args.data_seed)
    params = list(model.parameters())
    out = open(args.out, "w") if (args.out and rank == 0) else None
    loss_buf = torch.zeros(1)
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.precision)
    if half is not None and args.mode != "ddp":
        sys.exit("torch_gpt2_peer: --precision bf16/fp16 runs with --mode ddp")
    scaler = LossScaler(args.loss_scale_power, args.loss_scale_window, args.hysteresis, args.min_loss_scale)
    for step in range(1, args.steps + 1):
        start = time.perf_counter()
        x, y = loader.next()
        lr = lr_at(step, args)
        for g in opt.param_groups:
            g["lr"] = lr
        skipped = False
        if engine is not None:
            loss = engine(x, y)
            engine.backward(loss)
            engine.step()  # clips and steps at the group rates set above
            norm = torch.tensor(float(engine.get_global_grad_norm() or 0.0))
        else:
            opt.zero_grad(set_to_none=False)
        if engine is not None:
            pass
        elif half is None:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.precision == "autocast-bf16"):
                loss = forward_module(x, y)
            loss.backward()
        else:
            copies = {n: model.P(n).detach().to(half).requires_grad_() for n in model.names}
            loss = model(x, y, params=copies, dtype=half)
            scale = scaler.scale if half == torch.float16 else 1.0
            (loss * scale).backward()
            flat = torch.cat([copies[n].grad.float().reshape(-1) for n in model.names])  # fp32 accumulator
            dist.all_reduce(flat)  # fp32 sum over ranks: an overflow anywhere is seen everywhere
            flat /= world * scale
            if half == torch.float16:
                skipped = not bool(torch.isfinite(flat).all())
                scaler.update(skipped)
            at = 0
            for n in model.names:
                g = model.P(n)
                if g.grad is None:
                    g.grad = torch.zeros_like(g)
                g.grad.copy_(flat[at:at + g.numel()].view_as(g))
                at += g.numel()
        if engine is not None:
            pass
        elif skipped:
            norm = torch.tensor(float("nan"))
        else:
            norm = torch.nn.utils.clip_grad_norm_(params, args.clip) if args.clip > 0 else torch.tensor(0.0)
            norm = norm.full_tensor() if hasattr(norm, "full_tensor") else norm  # FSDP2: a DTensor
            opt.step()
        loss_buf[0] = loss.detach().float()
        dist.all_reduce(loss_buf)  # the mean loss over ranks, as zerotrain reports it
        step_ms = (time.perf_counter() - start) * 1000.0
        if out:
            record = {"step": step, "loss": loss_buf.item() / world, "lr": lr, "grad_norm": float(norm),
                      "step_ms": step_ms, "tokens_per_s": args.micro_batch * T * world / (step_ms / 1000.0)}
            if half == torch.float16:
                record.update(loss_scale=scaler.scale, skipped=skipped)
            out.write(json.dumps(record) + "\n")
            out.flush()
    if out:
        out.close()
    dist.barrier()
    # Leave without tearing down the process group: with ZeroRedundancyOptimizer, torch 2.x's gloo
    # teardown at interpreter exit can abort ("terminate called without an active exception").
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
