"""MemN2N presets for dialog bAbI and bAbI QA, chosen on dev and training data by
``benchmarks/tune_memn2n.py`` (see the comments below for the evidence)."""

# dialog bAbI (Bordes et al. 2017), one preset per task for both columns of Table 2 (with
# and without match types). Hops and embedding dimension start from the paper's Table 9
# (the learning rate 0.01 too); the rest was chosen on the dev sets only, by
# benchmarks/tune_memn2n.py --eval dev (test and tst-OOV never looked at for a choice):
# - bags of words, as in the paper: position encoding or no memory padding made no
#   difference on task 3 dev (74.75% without match types either way; 82.44 vs 82.42% with);
# - the whole conversation in memory for tasks 3 and 5 (histories up to 67 and 94 turns),
#   the last 100 turns for task 6 (up to 501, 95% under 160);
# - task 2 takes 3 hops (the paper: 1): with match types one hop fits only 92% of the
#   training API calls (dev 92.4%; 3 hops 100%), and without them dev is 100% either way;
# - task 5 takes 128 dimensions (the paper: 32): dev 97.1% instead of 91.9% (20 epochs) or
#   92.8% (60 epochs) without match types; with them 95.9% (96.2% at 32, 20 epochs);
# - epochs: 10 for task 1 (dev 99.95%), 20 elsewhere, 30 for task 5.
_DIALOG_COMMON = dict(position_encoding=False, learning_rate=0.01)
MEMN2N_DIALOG_BABI_PRESETS: dict[int, dict] = {
    1: dict(_DIALOG_COMMON, hops=1, embedding_dim=32, epochs=10),
    2: dict(_DIALOG_COMMON, hops=3, embedding_dim=32, epochs=20),
    3: dict(_DIALOG_COMMON, hops=3, embedding_dim=32, epochs=20, memory_size=100),
    4: dict(_DIALOG_COMMON, hops=2, embedding_dim=128, epochs=20),
    5: dict(_DIALOG_COMMON, hops=3, embedding_dim=128, epochs=30, memory_size=100),
    6: dict(_DIALOG_COMMON, hops=4, embedding_dim=128, epochs=20, memory_size=100),
}

# bAbI QA 1k: the settings of Sukhbaatar et al. (2015) for their best model (PE LS RN,
# 3 hops, adjacent tying) on every task, unchanged per task: bAbI asks for one learner for
# all tasks. Fit with n_init=5 or more: the restart with the lowest training error is kept.
_BABI_QA_COMMON = dict(
    hops=3,
    embedding_dim=20,
    memory_size=50,
    weight_tying="adjacent",
    position_encoding=True,
    temporal_encoding=True,
    linear_start=20,
    random_noise=0.1,
    learning_rate=0.01,
    anneal_every=25,
    epochs=100,
    batch_size=32,
    max_grad_norm=40.0,
)
MEMN2N_BABI_QA_PRESETS: dict[int, dict] = {t: dict(_BABI_QA_COMMON) for t in range(1, 21)}
