# Course setup: make the course's `utils` package importable. In a checkout of the
# course it does nothing visible. Elsewhere (Colab, Kaggle, a downloaded notebook)
# it clones the course next to the notebook and pip-installs only the packages that
# are missing; it never installs or upgrades torch (Colab and Kaggle ship it).
import importlib.util, os, pathlib, subprocess, sys
os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")  # AVX2 kernels on every x86 CPU (not AVX-512);
os.environ.setdefault("MKL_CBWR", "AVX2")  # rounding-level digits may still differ from the book's (see the preface)
COURSE_REPO = "https://github.com/aiayn-course/attention-rebuilt"
NEEDED = {"numpy": "numpy>=1.26,<3", "matplotlib": "matplotlib>=3.8,<4", "tabulate": "tabulate>=0.9,<1",
          "tqdm": "tqdm>=4.66,<5"}  # what `utils` imports besides torch, as requirements.txt (tests/test_setup_cell.py)
here = pathlib.Path.cwd().resolve()
is_course = lambda p: (p / "utils" / "__init__.py").is_file() and (p / "_toc.yml").is_file()
root = next((p for p in (here, *here.parents) if is_course(p)), here / COURSE_REPO.rsplit("/", 1)[-1])
if not is_course(root):
    if importlib.util.find_spec("torch") is None:
        raise ImportError("This course needs PyTorch; install it (https://pytorch.org), then rerun this cell.")
    source = os.environ.get("COURSE_SOURCE", COURSE_REPO)  # COURSE_SOURCE: a fork or a local copy
    clone = subprocess.run(["git", "clone", "--quiet", "--depth", "1", source, str(root)], capture_output=True, text=True)
    if clone.returncode != 0:
        advice = ("Check COURSE_SOURCE, which names where to clone the course from" if "COURSE_SOURCE" in os.environ
                  else "Is this notebook online? On Kaggle, turn Internet on in the notebook's settings")
        raise RuntimeError(f"could not fetch the course from {source} ({(clone.stderr or '').strip()[-300:]}). "
                           f"{advice}, then rerun this cell.")
missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
if missing:
    print(f"Installing {', '.join(missing)} with pip, for the course's code...", flush=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *(NEEDED[m] for m in missing)], check=True)
if str(root) not in sys.path:
    sys.path.insert(0, str(root))
