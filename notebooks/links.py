"""The links that open the course for a class: Binder, and nbgitpuller on your own JupyterHub.

    python notebooks/links.py --repo https://github.com/OWNER/REPO
    python notebooks/links.py --repo https://github.com/OWNER/REPO --hub https://hub.example.edu --branch main

Binder builds the image from ``binder/`` (repo2docker) and opens JupyterLab on the first lesson. On a
JupyterHub whose image already has the course installed (built by repo2docker from the same ``binder/``,
or any image with ``pip install minigrad-lab[lab]`` and nbgitpuller), the nbgitpuller link copies the
repository into each learner's home on their first click and pulls updates on later clicks, without
touching files they changed.
"""

from __future__ import annotations

import argparse
import sys
from urllib.parse import quote, urlencode, urlparse

FIRST_LESSON = "notebooks/00_start_here.ipynb"


def binder_link(repo: str, branch: str = "main", path: str = FIRST_LESSON) -> str:
    """mybinder.org's link for a GitHub repository, opening JupyterLab on ``path``."""
    parts = urlparse(repo)
    if parts.netloc != "github.com" or len(parts.path.strip("/").split("/")) != 2:
        raise ValueError(f"expected https://github.com/OWNER/REPO, got {repo!r}")
    owner_repo = parts.path.strip("/").removesuffix(".git")
    query = urlencode({"urlpath": f"lab/tree/{path}"})
    return f"https://mybinder.org/v2/gh/{owner_repo}/{quote(branch, safe='')}?{query}"


def nbgitpuller_link(hub: str, repo: str, branch: str = "main", path: str = FIRST_LESSON) -> str:
    """nbgitpuller's link: clone (or update) ``repo`` into the learner's home, then open ``path`` in JupyterLab.
    nbgitpuller puts the repository in a folder named after it, so the path starts with that name."""
    folder = urlparse(repo).path.strip("/").split("/")[-1].removesuffix(".git")
    query = urlencode({"repo": repo, "branch": branch, "urlpath": f"lab/tree/{folder}/{path}"})
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", required=True, help="the course's git repository, https://github.com/OWNER/REPO")
    parser.add_argument("--branch", default="main")
    parser.add_argument("--hub", help="your JupyterHub's address, for the nbgitpuller link")
    args = parser.parse_args(argv)
    try:
        print(f"Binder:      {binder_link(args.repo, args.branch)}")
    except ValueError as err:
        print(f"Binder:      (not on GitHub: {err})")
    if args.hub:
        print(f"nbgitpuller: {nbgitpuller_link(args.hub, args.repo, args.branch)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
