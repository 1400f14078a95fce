"""Token shards for the Python training tests: a few hundred lines of text through
`zerotrain prepare-data` into <work>/data (byte-level, llm.c format)."""
import subprocess
from pathlib import Path


def prepare_tiny_shards(zerotrain, work: Path, line: str, lines: int) -> str:
    """Writes `lines` numbered copies of `line` (a format string taking i) and returns the train glob."""
    (work / "text.txt").write_text("".join(line.format(i=i) + "\n\n" for i in range(lines)))
    subprocess.run([zerotrain, "prepare-data", "--input", work / "text.txt", "--output", work / "data"], check=True,
                   stdout=subprocess.DEVNULL)
    return f"{work}/data/train_*.bin"
