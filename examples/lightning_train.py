#!/usr/bin/env python3
"""lightning_train.py -- a PyTorch Lightning model fed by gpufeed.

    python3 examples/lightning_train.py [PATH] [--epochs N] [--workers N] [--batch N] [--cpu]
                                        [--checkpoint FILE] [--resume FILE]

Predicts a flight's arrival delay from its departure delay, distance, air
time, hour and month (examples/data/flights.parquet). The gpufeed Loader is
the train dataloader as it is: a re-iterable IterableDataset, so each epoch
Lightning's iter() runs the loader's next epoch and len() is its batch
count. With label= it yields (x, y, valid) tensors: x [rows, 5], y [rows]
(arr_delay), valid [rows] (arr_delay is not null; its validity=True asks for
the mask). Lightning fetches one batch ahead; a gpufeed batch stays valid
until the next-but-one next(), and tensors keep their slot while they live.

The Loader's state_dict() goes into the checkpoint (on_save_checkpoint) and
comes back with it (on_load_checkpoint): --checkpoint FILE saves one at the
end, and --resume FILE continues from it. --epochs is the total: 2, then 3
with --resume trains epoch 2 only, on the batches an uninterrupted run
trains it on (the loader's epoch 2, not epoch 0 again).
"""
import argparse
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))

import torch  # noqa: E402
import lightning as L  # noqa: E402

import gpufeed  # noqa: E402

FEATURES = ["dep_delay", "distance", "air_time", "hour", "month"]
SCALE = [1 / 40.0, 1 / 1000.0, 1 / 150.0, 1 / 24.0, 1 / 12.0]


class DelayModel(L.LightningModule):
    def __init__(self, loader, lr=3e-3):
        super().__init__()
        self.loader = loader                    # its position goes into the checkpoints
        self.net = torch.nn.Sequential(torch.nn.Linear(5, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
        self.register_buffer("scale", torch.tensor(SCALE))
        self.lr = lr
        self.total = self.batches = self.rows = 0

    def training_step(self, batch, batch_idx):
        x, y, valid = batch                     # views of gpufeed's batch: no copy
        pred = self.net(x * self.scale).squeeze(1)
        loss = ((pred - y / 40.0) ** 2)[valid].mean()
        self.total += loss.item()
        self.batches += 1
        self.rows += x.shape[0]
        return loss

    def on_train_epoch_end(self):
        print("epoch %d: loss %.6f over %d rows, %d batches (the loader's epoch %d)"
              % (self.current_epoch, self.total / max(self.batches, 1), self.rows, self.batches, self.loader.epoch - 1),
              flush=True)
        self.total = self.batches = self.rows = 0

    def on_save_checkpoint(self, checkpoint):
        checkpoint["gpufeed_loader"] = self.loader.state_dict()

    def on_load_checkpoint(self, checkpoint):
        self.loader.load_state_dict(checkpoint["gpufeed_loader"])

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", nargs="?", default=os.path.join(HERE, "data", "flights.parquet"))
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cpu", action="store_true", help="CPU batches and training even when a GPU is there")
    ap.add_argument("--checkpoint", help="save a checkpoint here at the end")
    ap.add_argument("--resume", help="resume from this checkpoint (the model, the optimizer and the loader's position)")
    args = ap.parse_args()

    gpu = not args.cpu and torch.cuda.is_available()
    features = [gpufeed.Feature(c, "float32") for c in FEATURES]
    loader = gpufeed.Loader(args.path, features=features + [gpufeed.Feature("arr_delay", "float32", validity=True)],
                            label="arr_delay", batch_rows=args.batch, workers=args.workers, seed=args.seed,
                            shuffle_window=4, device=0 if gpu else None)
    warnings.filterwarnings("ignore", ".*does not have many workers.*")   # gpufeed decodes in its own threads
    torch.manual_seed(args.seed)
    trainer = L.Trainer(max_epochs=args.epochs, accelerator="gpu" if gpu else "cpu", devices=1, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(DelayModel(loader), train_dataloaders=loader, ckpt_path=args.resume)
    if args.checkpoint:
        trainer.save_checkpoint(args.checkpoint)
    print("%d epochs on %s; the loader: %d batches an epoch, next epoch %d" % (args.epochs, "cuda" if gpu else "cpu",
                                                                          len(loader), loader.epoch))
    loader.close()


if __name__ == "__main__":
    main()
