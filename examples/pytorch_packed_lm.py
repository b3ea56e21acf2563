"""A tiny causal language model trained on packed token rows, on the CPU.

gpufeed packs the documents of a list<int32> column (examples/data/sequences.parquet:
4,000 arithmetic sequences of 8 to 120 tokens) into rows of T tokens, no
padding, in a shuffled order that only the seed decides. positions=True gives
each token's position in its document, 0 where a document starts: attention
is masked to each document (the rows' segment ids are the running count of
those zeros) and position embeddings count from the document's start, as
document-masked attention and FlashAttention's varlen kernels expect. The
first token of each document is not a target: nothing before it in its
document predicts it.

    python examples/pytorch_packed_lm.py            # 2 epochs
    python examples/pytorch_packed_lm.py --epochs 1

It prints the loss of each epoch and exits 1 unless the last is well below
the first (the test suite runs it so).
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import gpufeed  # noqa: E402

T, VOCAB, DIM = 64, 256, 48


class TinyLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = torch.nn.Embedding(VOCAB, DIM)
        self.pos = torch.nn.Embedding(T, DIM)
        layer = torch.nn.TransformerEncoderLayer(DIM, nhead=4, dim_feedforward=4 * DIM, dropout=0.0, batch_first=True)
        self.body = torch.nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        self.head = torch.nn.Linear(DIM, VOCAB)

    def forward(self, ids, positions):
        # a document cut by a row's end goes on counting past T in the next row: clamp for the embedding
        x = self.tok(ids) + self.pos(positions.clamp(max=T - 1))
        seg = torch.cumsum(positions == 0, dim=1)                        # [rows, T] document of each token
        same_doc = seg[:, :, None] == seg[:, None, :]
        causal = torch.ones(T, T, dtype=torch.bool).tril()
        blocked = ~(same_doc & causal)                                   # True: not attended
        mask = blocked.repeat_interleave(4, dim=0)                       # [rows * heads, T, T]
        return self.head(self.body(x, mask=mask))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sequences.parquet"))
    args = ap.parse_args()
    torch.manual_seed(0)
    loader = gpufeed.Loader(args.data, features=[gpufeed.Feature("input_ids", dtype="int64", pack=T, positions=True)],
                            batch_rows=16, workers=2, seed=0, shuffle_window=1, device=None)
    model = TinyLM()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for epoch in range(args.epochs):
        total = count = 0.0
        for batch in loader:
            ids = torch.from_dlpack(batch.feature(0))                    # [rows, T] tokens
            pos = torch.from_dlpack(batch.feature(1))                    # [rows, T] positions in their documents
            logits = model(ids, pos)
            target = ids[:, 1:].clone()
            target[pos[:, 1:] == 0] = -100                               # a document's first token: no target
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), target.reshape(-1), ignore_index=-100)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            count += 1
        losses.append(total / count)
        st = loader.stats()
        print("epoch %d: loss %.3f, %d batches of %d x %d tokens, %d tokens left over" % (epoch, losses[-1], count, 16, T, st["tokens_dropped"]))
    loader.close()
    ok = losses[-1] < 0.6 * losses[0]
    print("loss %.3f -> %.3f: %s" % (losses[0], losses[-1], "learned" if ok else "did not learn"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
