"""Baseline for the discovery case: the Agent Skills reference library
(`skills-ref` from PyPI) finds, parses, validates and reads every immediate
subdirectory of DIR that holds a SKILL.md, which is what `agents skill
discover` does before it stores the result. Each file is parsed once (the
library's `validate()` and `read_properties()` would each parse it again).
Usage: python skills_ref_read.py DIR; prints `read N, invalid M`."""

import sys
from pathlib import Path

from skills_ref import SkillError, SkillProperties, find_skill_md
from skills_ref.parser import parse_frontmatter
from skills_ref.validator import validate_metadata


def read(folder: Path) -> SkillProperties | None:
    skill_md = find_skill_md(folder)
    if skill_md is None:
        return None
    metadata, _ = parse_frontmatter(skill_md.read_text(encoding="utf-8"))
    if validate_metadata(metadata, folder):
        raise SkillError(f"{folder}: invalid SKILL.md")
    return SkillProperties(
        name=metadata["name"].strip(),
        description=metadata["description"].strip(),
        license=metadata.get("license"),
        compatibility=metadata.get("compatibility"),
        allowed_tools=metadata.get("allowed-tools"),
        metadata=metadata.get("metadata"),
    )


def main(root: Path) -> int:
    found = invalid = 0
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        try:
            if read(folder) is not None:
                found += 1
        except SkillError:
            invalid += 1
    print(f"read {found}, invalid {invalid}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: skills_ref_read.py DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1])))
