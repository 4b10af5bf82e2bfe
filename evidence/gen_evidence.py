#!/usr/bin/env python3
"""Generate evidence/<source-id>.yaml from the frozen quote record.

One file per source (one author, title and URL). Each excerpt keeps the record's `quote`
exactly as `text`; the source's `status` is the weakest status among its excerpts.

Usage: python3 evidence/gen_evidence.py [QUOTES_YAML] [OUT_DIR]
"""
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
# The quote records live in shared/ beside the repository.
QUOTES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "shared", "sources", "quotes.yaml")
OUT = sys.argv[2] if len(sys.argv) > 2 else HERE

# url -> (source id, author as shown, title as shown). The author line is what
# `mldebug quote <who>` matches, so it names the person who wrote the words.
SOURCES = {
    "https://andyljones.com/posts/rl-debugging.html": (
        "jones-rl-debugging", "Andy Jones", "Debugging RL, Without the Agonizing Pain"),
    "https://www.deeplearningbook.org/contents/guidelines.html": (
        "goodfellow-practical-methodology", "Ian Goodfellow, Yoshua Bengio, Aaron Courville",
        "Deep Learning, chapter 11: Practical Methodology (11.5 Debugging Strategies)"),
    "http://amid.fish/reproducing-deep-rl": (
        "rahtz-reproducing-rl", "Matthew Rahtz",
        "Lessons Learned Reproducing a Deep Reinforcement Learning Paper"),
    "https://arxiv.org/abs/1709.06560": (
        "henderson-rl-that-matters",
        "Peter Henderson, Riashat Islam, Philip Bachman, Joelle Pineau, Doina Precup, David Meger",
        "Deep Reinforcement Learning that Matters (AAAI 2018)"),
    "https://www.alignmentforum.org/posts/jP9KDyMkchuv6tHwm/how-to-become-a-mechanistic-interpretability-researcher": (
        "nanda-mech-interp", "Neel Nanda", "How To Become A Mechanistic Interpretability Researcher"),
    "https://www.lesswrong.com/posts/LTypqBMTSmRrrhb2v/how-to-get-good-at-programming": (
        "mini-good-at-programming", "Ulisse Mini", "How to get good at programming"),
    "https://www.lesswrong.com/posts/nEBbw2Bc2CnN2RMxy/gears-level-models-are-capital-investments": (
        "wentworth-gears", "John Wentworth", "Gears-Level Models are Capital Investments"),
    "https://spinningup.openai.com/en/latest/spinningup/spinningup.html": (
        "achiam-spinning-up", "Joshua Achiam", "Spinning Up as a Deep RL Researcher"),
    "https://gwern.net/unseeing": (
        "gwern-unseeing", "Gwern Branwen", "Unseeing (section: Learning To Unsee)"),
    "https://kidger.site/thoughts/just-know-stuff/": (
        "kidger-just-know-stuff", "Patrick Kidger",
        "Just know stuff. (Or, how to achieve success in a machine learning PhD.)"),
    "https://karpathy.github.io/2019/04/25/recipe/": (
        "karpathy-recipe", "Andrej Karpathy", "A Recipe for Training Neural Networks"),
    "https://blog.slavv.com/37-reasons-why-your-neural-network-is-not-working-4020854bd607": (
        "ivanov-37-reasons", "Slav Ivanov", "37 Reasons why your Neural Network is not working"),
    "https://koaning.io/posts/labels/": (
        "warmerdam-bad-labels", "Vincent D. Warmerdam (koaning)", "Bad Labels"),
    "https://gwern.net/tank": (
        "gwern-tank", "Gwern Branwen", "The Neural Net Tank Urban Legend"),
    "https://cs231n.github.io/neural-networks-3/": (
        "cs231n-learning", "Stanford CS231n course notes (Andrej Karpathy)",
        "Neural Networks Part 3: Learning and Evaluation"),
    "https://www.alexirpan.com/2018/02/14/rl-hard.html": (
        "irpan-rl-hard", "Alex Irpan", "Deep Reinforcement Learning Doesn't Work Yet"),
    "http://joschu.net/docs/nuts-and-bolts.pdf": (
        "schulman-nuts-and-bolts", "John Schulman", "The Nuts and Bolts of Deep RL Research (slides)"),
    "https://arxiv.org/abs/1706.02677": (
        "goyal-large-minibatch", "Priya Goyal, Piotr Dollár, Ross Girshick, et al.",
        "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour"),
    "https://arxiv.org/abs/1812.06162": (
        "mccandlish-large-batch", "Sam McCandlish, Jared Kaplan, Dario Amodei, OpenAI Dota Team",
        "An Empirical Model of Large-Batch Training"),
    "https://github.com/lucidrains/x-transformers": (
        "lucidrains-x-transformers", "Phil Wang (lucidrains)", "x-transformers README (section: QK RMSNorm)"),
    "https://deepwiki.com/karpathy/nanochat": (
        "deepwiki-nanochat", "DeepWiki (AI-generated wiki, not the nanochat author)",
        "nanochat DeepWiki, section 12"),
    "https://github.com/huggingface/transformers/blob/main/src/transformers/debug_utils.py": (
        "bekman-debug-utils", "Stas Bekman",
        "DebugUnderflowOverflow docstring, transformers debug_utils.py"),
    "https://huggingface.co/learn/llm-course/chapter8/4": (
        "hf-debugging-pipeline", "Hugging Face LLM Course (chapter 8)",
        "Debugging the training pipeline (LLM Course, chapter 8.4)"),
    "https://unsloth.ai/docs/basics/inference-and-deployment/troubleshooting-inference": (
        "unsloth-troubleshooting", "Unsloth (docs)", "Troubleshooting Inference"),
    "https://github.com/unslothai/unsloth-zoo/blob/main/unsloth_zoo/training_utils.py": (
        "unsloth-zoo-labels", "Unsloth (unsloth-zoo source code)",
        "unsloth_zoo/training_utils.py, error raised when every label is masked"),
    "https://docs.axolotl.ai/docs/debugging.html": (
        "axolotl-debugging", "Hamel Husain (Axolotl docs)", "Debugging"),
    "https://docs.axolotl.ai/docs/training_stability.html": (
        "axolotl-training-stability", "Axolotl docs", "Training Stability & Debugging"),
    "https://github.com/karpathy/nanochat/blob/master/dev/LOG.md": (
        "karpathy-nanochat-log", "Andrej Karpathy",
        "nanochat dev/LOG.md, entry 2026-01-13: BOS-Aligned Dataloader with Bin Packing"),
    "https://github.com/karpathy/nanochat/blob/master/scripts/base_train.py": (
        "karpathy-nanochat-train", "Andrej Karpathy (nanochat code comment)",
        "nanochat scripts/base_train.py (fp16 GradScaler step)"),
    "https://www.answer.ai/posts/2024-04-12-tips.html": (
        "whitaker-surface-area", "Johno Whitaker",
        "A few tips for working on high-surface-area problems (Answer.AI blog)"),
}

RANK = {"unverified": 0, "verified-with-differences": 1, "verified-exact": 2}

# The record's notes call the folklore skill this knowledge grows from "the SKILL";
# name it plainly so it is not mistaken for this project's SKILL.md.
REWRITES = [
    ("The SKILL's", "The folklore draft's"),
    ("the SKILL's", "the folklore draft's"),
    ("The SKILL", "The folklore draft"),
    ("the SKILL", "the folklore draft"),
    ("the project cache", "the folklore draft's evidence cache"),
    ("The project cache", "The folklore draft's evidence cache"),
    ("the project's own docs/evidence cache", "the folklore draft's evidence cache"),
    ("the project's hand-pasted cache", "the folklore draft's hand-pasted cache"),
    ("The project's hand-pasted cache", "The folklore draft's hand-pasted cache"),
]


def clean(note: str) -> str:
    for old, new in REWRITES:
        note = note.replace(old, new)
    return note


class Dumper(yaml.SafeDumper):
    pass


def str_presenter(dumper, data):
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


Dumper.add_representer(str, str_presenter)


def main() -> None:
    with open(QUOTES, encoding="utf-8") as f:
        records = yaml.safe_load(f)
    by_source = {}
    for r in records:
        if r["url"] not in SOURCES:
            sys.exit(f"{QUOTES}: record {r['id']}: url {r['url']} has no source id")
        by_source.setdefault(r["url"], []).append(r)
    os.makedirs(OUT, exist_ok=True)
    for url, recs in by_source.items():
        sid, author, title = SOURCES[url]
        dates = sorted({r["date"] for r in recs if r["date"]})
        doc = {
            "id": sid,
            "author": author,
            "title": title,
            "url": url,
            "date": str(dates[0]) if dates else "",
            "status": min((r["status"] for r in recs), key=RANK.__getitem__),
            "excerpts": [
                {
                    "id": r["id"],
                    "text": r["quote"],
                    "context": r["context"],
                    "status": r["status"],
                    "note": clean(r["note"]),
                    "verified_against": r["verified_against"],
                    "topics": list(r["topics"]),
                }
                for r in recs
            ],
        }
        path = os.path.join(OUT, f"{sid}.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"# Evidence for [^{sid}]: generated by evidence/gen_evidence.py from the quote record.\n")
            yaml.dump(doc, f, Dumper=Dumper, allow_unicode=True, sort_keys=False, width=100)
    print(f"{len(by_source)} sources, {len(records)} excerpts -> {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
