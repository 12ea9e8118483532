#!/usr/bin/env bash
# scripts/lambda_image.sh - a stand-in for the Lambda base image public.ecr.aws/lambda/python:3.13,
# built from what a machine without a container registry can reach (Debian's package mirror
# and PyPI), so that `sam local invoke --skip-pull-image` runs the functions. It is not Amazon
# Linux (docs/development/local-runtime.md): with registry access, `docker pull` the official image.
#
#   sudo scripts/lambda_image.sh        # idempotent: ~60 s from nothing, <1 s when up to date
#
# Each step is skipped when already done:
#   1. installs docker.io + debootstrap from Debian if dockerd/debootstrap are missing
#   2. starts dockerd in the background (log: $DOCKERD_LOG) unless a daemon answers
#   3. debootstraps a minimal Debian $SUITE (default trixie: python3.13 is its system
#      Python) into $WORK_DIR, cached across runs
#   4. lays out the Lambda paths: /var/lang/bin/python3.13, /var/runtime/{bootstrap,
#      bootstrap.py, awslambdaric}, /lambda-entrypoint.sh, /usr/local/bin/aws-lambda-rie,
#      boto3 in /var/lang/lib/python3.13/site-packages, /var/task, /opt
#   5. `docker import`s it as public.ecr.aws/lambda/python:3.13-<arch> (the tag SAM looks
#      for) plus :3.13 and lambda-standin/python:3.13-<arch>, with the official image's
#      ENV / WORKDIR / ENTRYPOINT
#   6. drops SAM's derived ("rapid" / samcli/lambda-*) images built from an older base
#   7. self-test: runs the image with the RIE and invokes a tiny handler over HTTP
#
# The image is for this machine's architecture (x86_64 or arm64: no emulation). Fast path:
# if the image exists and carries the same recipe label, it exits at once. FORCE=1
# rebuilds (the debootstrap cache is kept; FORCE=2 also redoes debootstrap). One build at
# a time (flock on $WORK_DIR/.lock).
#
# Knobs (environment): SUITE, MIRROR (default: the machine's apt archive), WORK_DIR, AWSLAMBDARIC_VERSION, INCLUDE_BOTO3,
# BOTO3_SPEC, DOCKERD_LOG, HOST_PYTHON, SAM_PYTHON, SELFTEST, FORCE, REPO, TAG_LOCAL.
set -euo pipefail

# ----------------------------------------------------------------------------- settings
SUITE=${SUITE:-trixie}
WORK_DIR=${WORK_DIR:-/var/cache/lambda-standin}
AWSLAMBDARIC_VERSION=${AWSLAMBDARIC_VERSION:-4.2.2}
INCLUDE_BOTO3=${INCLUDE_BOTO3:-1}
BOTO3_SPEC=${BOTO3_SPEC:-boto3}
DOCKERD_LOG=${DOCKERD_LOG:-/var/log/dockerd.log}
SELFTEST=${SELFTEST:-1}
FORCE=${FORCE:-0}
PY_MINOR=3.13
case "$(uname -m)" in   # Lambda's names; Debian's, Docker's and the wheels' for the same
  x86_64) ARCH=x86_64 DEB_ARCH=amd64 WHEEL_PLATFORM=manylinux2014_x86_64 ;;
  aarch64|arm64) ARCH=arm64 DEB_ARCH=arm64 WHEEL_PLATFORM=manylinux2014_aarch64 ;;
  *) echo "ERROR: no Lambda architecture for $(uname -m)" >&2; exit 1 ;;
esac
REPO=${REPO:-public.ecr.aws/lambda/python}    # override only to build a second, side-by-side image
TAG_ARCH="$REPO:$PY_MINOR-$ARCH"       # what SAM 1.170 uses for Runtime python3.13 + Architectures [$ARCH]
TAG_PLAIN="$REPO:$PY_MINOR"
TAG_LOCAL=${TAG_LOCAL:-lambda-standin/python:$PY_MINOR-$ARCH}   # a name for --invoke-image
SCRIPT_PATH=$(readlink -f "${BASH_SOURCE[0]}")
ROOT=$(cd "$(dirname "$SCRIPT_PATH")/.." && pwd)


elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fs", b - a }'; }
T0=$(date +%s.%N)
LAST=$T0
IN_STEP=0
step() {  # step NAME: print the time the previous step took, then announce NAME
  local now; now=$(date +%s.%N)
  [ "$IN_STEP" = 1 ] && printf '    (%s)\n' "$(elapsed "$LAST" "$now")" >&2
  LAST=$now IN_STEP=1
  printf '==> %s\n' "$*" >&2
}
log() { printf '    %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

if [ -z "${MIRROR:-}" ]; then
  # The machine's own apt configuration, whatever its format (sources.list or deb822) or its
  # mirror's name: the archive its Packages indexes come from, not its security or updates
  # suites. No mirror is named here - a machine that reaches only its own must use that one.
  MIRROR=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' 2>/dev/null \
             | awk '$2 !~ /[-\/](security|updates|backports)$/ {sub(/\/$/, "", $1); print $1; exit}' || true)
  [ -n "$MIRROR" ] || die "no Debian archive in this machine's apt configuration (apt-get indextargets); set MIRROR="
fi
finish() {
  local now; now=$(date +%s.%N)
  [ "$IN_STEP" = 1 ] && printf '    (%s)\n' "$(elapsed "$LAST" "$now")" >&2
  printf '==> total %s\n' "$(elapsed "$T0" "$now")" >&2
}

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot, dockerd)"

# Recipe fingerprint: this script plus the knobs that change the image.
RECIPE=$( { cat "$SCRIPT_PATH"; echo "$SUITE $ARCH $AWSLAMBDARIC_VERSION $INCLUDE_BOTO3 $BOTO3_SPEC"; } \
          | sha256sum | cut -c1-16)

printf '==> stand-in for %s (recipe %s)\n' "$TAG_ARCH" "$RECIPE" >&2
mkdir -p "$WORK_DIR"
exec 9>"$WORK_DIR/.lock"
flock 9  # another build (a parallel test run) finishes first; the fast path then applies

# ----------------------------------------------------------------------------- 1. packages
if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
  step "installing docker.io debootstrap (apt)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends docker.io debootstrap >/dev/null
fi
command -v docker >/dev/null || die "no docker client on PATH"

# ----------------------------------------------------------------------------- 2. dockerd
if ! docker info >/dev/null 2>&1; then
  step "starting dockerd (log: $DOCKERD_LOG)"
  mkdir -p "$(dirname "$DOCKERD_LOG")"
  # setsid + nohup: the daemon outlives this script and its shell; pid is in /var/run/docker.pid
  setsid nohup dockerd >>"$DOCKERD_LOG" 2>&1 < /dev/null 9>&- &  # not holding the build lock
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 0.5
  done
  docker info >/dev/null 2>&1 || { tail -n 30 "$DOCKERD_LOG" >&2; die "dockerd did not come up"; }
  log "dockerd pid $(cat /var/run/docker.pid 2>/dev/null || echo '?'), storage $(docker info -f '{{.Driver}}'), cgroup v$(docker info -f '{{.CgroupVersion}}')"
fi

# ----------------------------------------------------------------------------- fast path
current=$(docker image inspect -f '{{index .Config.Labels "lambda-standin.recipe"}}' "$TAG_ARCH" 2>/dev/null || true)
if [ "$current" = "$RECIPE" ] && [ "$FORCE" = 0 ]; then
  docker tag "$TAG_ARCH" "$TAG_PLAIN"
  docker tag "$TAG_ARCH" "$TAG_LOCAL"
  log "image $TAG_ARCH is up to date ($(docker image inspect -f '{{.Size}}' "$TAG_ARCH" | numfmt --to=iec)); FORCE=1 rebuilds"
  finish
  exit 0
fi

# ----------------------------------------------------------------------------- 3. debootstrap
mkdir -p "$WORK_DIR"
INCLUDE="python$PY_MINOR,ca-certificates"
BASE="$WORK_DIR/debootstrap-$SUITE-$ARCH"
[ "$FORCE" = 2 ] && rm -rf "$BASE"
if [ ! -e "$BASE/.complete" ]; then
  step "debootstrap --variant=minbase $SUITE from $MIRROR"
  curl -fsS -o /dev/null --max-time 30 "$MIRROR/dists/$SUITE/InRelease" \
    || die "$MIRROR serves no suite '$SUITE' (set SUITE= to one whose python3.13 package exists)"
  rm -rf "$BASE"
  debootstrap --variant=minbase --arch="$DEB_ARCH" --include="$INCLUDE" "$SUITE" "$BASE" "$MIRROR" \
    > "$WORK_DIR/debootstrap.log" 2>&1 || { tail -n 30 "$WORK_DIR/debootstrap.log" >&2; die "debootstrap failed"; }
  touch "$BASE/.complete"
fi

# ----------------------------------------------------------------------------- 4. layout
step "staging rootfs"
STAGE="$WORK_DIR/stage"
rm -rf "$STAGE"
cp -a "$BASE" "$STAGE"
rm -f "$STAGE/.complete"
# Weight we do not need in a runtime image.
rm -rf "$STAGE"/var/cache/apt/* "$STAGE"/var/lib/apt/lists/* "$STAGE"/usr/share/doc/* \
       "$STAGE"/usr/share/man/* "$STAGE"/usr/share/info/* "$STAGE"/usr/share/locale/* \
       "$STAGE"/var/log/* "$STAGE"/tmp/* 2>/dev/null || true
mkdir -p "$STAGE"/var/task "$STAGE"/var/runtime "$STAGE"/var/lang/bin "$STAGE"/opt \
         "$STAGE/var/lang/lib/python$PY_MINOR/site-packages" "$STAGE"/tmp
chmod 1777 "$STAGE"/tmp

PYBIN=/usr/bin/python$PY_MINOR
ln -sfn "$PYBIN" "$STAGE/var/lang/bin/python$PY_MINOR"
ln -sfn "python$PY_MINOR" "$STAGE/var/lang/bin/python3"
ln -sfn "python$PY_MINOR" "$STAGE/var/lang/bin/python"
chroot "$STAGE" "$PYBIN" -c 'import ssl, sqlite3, ctypes, lzma, bz2, zlib, decimal, json' \
  || die "python in the rootfs is missing stdlib modules / shared libraries"

step "pip: awslambdaric==$AWSLAMBDARIC_VERSION -> /var/runtime$( [ "$INCLUDE_BOTO3" = 1 ] && echo ", $BOTO3_SPEC -> /var/lang/lib/python$PY_MINOR/site-packages")"
HOST_PYTHON=${HOST_PYTHON:-$ROOT/.venv/bin/python}
[ -x "$HOST_PYTHON" ] || HOST_PYTHON=python3
"$HOST_PYTHON" -m pip --version >/dev/null 2>&1 || die "no pip for $HOST_PYTHON (set HOST_PYTHON)"
PIP_TARGET_ARGS=(--quiet --disable-pip-version-check --no-compile --no-warn-conflicts --root-user-action=ignore
  --platform "$WHEEL_PLATFORM" --implementation cp --python-version "$PY_MINOR" --only-binary=:all:)
pip_target() {  # pip_target DIR REQ...: install $ARCH cp313 wheels into DIR (host pip, no chroot)
  local dir=$1; shift
  # (the grep drops this machine's pip.conf noise about missing local find-links folders)
  "$HOST_PYTHON" -m pip install "${PIP_TARGET_ARGS[@]}" --target "$dir" "$@" \
    2> >(grep -v 'is ignored: it is neither a file nor a directory' >&2)
}
pip_target "$STAGE/var/runtime" "awslambdaric==$AWSLAMBDARIC_VERSION"
if [ "$INCLUDE_BOTO3" = 1 ]; then
  pip_target "$STAGE/var/lang/lib/python$PY_MINOR/site-packages" "$BOTO3_SPEC"
fi
rm -rf "$STAGE/var/runtime/bin" "$STAGE/var/lang/lib/python$PY_MINOR/site-packages/bin"

# /var/runtime/bootstrap: what the RIE runs (SAM starts the RIE with no arguments, and the
# RIE then looks for /var/task/bootstrap, /opt/bootstrap, /var/runtime/bootstrap).
cat > "$STAGE/var/runtime/bootstrap" <<EOF
#!/bin/sh
# Stand-in for the python$PY_MINOR runtime bootstrap of the Lambda base image.
export AWS_EXECUTION_ENV=AWS_Lambda_python$PY_MINOR
PY=/var/lang/bin/python$PY_MINOR
if [ -n "\${AWS_LAMBDA_EXEC_WRAPPER:-}" ]; then
  [ -f "\$AWS_LAMBDA_EXEC_WRAPPER" ] || { echo "\$AWS_LAMBDA_EXEC_WRAPPER: does not exist" >&2; exit 127; }
  [ -x "\$AWS_LAMBDA_EXEC_WRAPPER" ] || { echo "\$AWS_LAMBDA_EXEC_WRAPPER: is not an executable" >&2; exit 126; }
  exec "\$AWS_LAMBDA_EXEC_WRAPPER" "\$PY" /var/runtime/bootstrap.py
fi
exec "\$PY" /var/runtime/bootstrap.py
EOF

cat > "$STAGE/var/runtime/bootstrap.py" <<'EOF'
"""Stand-in for the Lambda Python runtime's bootstrap: set sys.path as Lambda does, then
hand over to awslambdaric (the Runtime Interface Client) with the configured handler."""

import os
import sys


def _set_sys_path() -> None:
    ver = "python%d.%d" % sys.version_info[:2]
    front = [
        os.environ.get("LAMBDA_TASK_ROOT", "/var/task"),   # function code (CodeUri)
        "/opt/python/lib/%s/site-packages" % ver,          # layers
        "/opt/python",                                     # layers
        "/var/lang/lib/%s/site-packages" % ver,            # runtime-included boto3
        os.environ.get("LAMBDA_RUNTIME_DIR", "/var/runtime"),  # awslambdaric
    ]
    # sys.path[0] is this script's folder (/var/runtime): drop it, keep PYTHONPATH + stdlib.
    rest = [p for p in sys.path[1:] if p not in front]
    sys.path[:] = front + rest


def main() -> None:
    handler = (sys.argv[1] if len(sys.argv) > 1 else None) \
        or os.environ.get("_HANDLER") or os.environ.get("AWS_LAMBDA_FUNCTION_HANDLER")
    if not handler:
        sys.stderr.write("bootstrap: no handler (_HANDLER / AWS_LAMBDA_FUNCTION_HANDLER unset)\n")
        sys.exit(142)
    os.environ["_HANDLER"] = handler
    _set_sys_path()
    from awslambdaric import __main__ as ric

    ric.main([sys.argv[0], handler])


if __name__ == "__main__":
    main()
EOF

# /lambda-entrypoint.sh: the official image's ENTRYPOINT (used by `docker run IMAGE handler`;
# SAM replaces the entrypoint with /var/rapid/aws-lambda-rie).
cat > "$STAGE/lambda-entrypoint.sh" <<'EOF'
#!/bin/sh
# Usage: IMAGE module.function   (as the official Lambda base image)
if [ $# -ne 1 ]; then
  echo "entrypoint requires the handler name to be the first argument" >&2
  exit 142
fi
export _HANDLER="$1"
if [ -z "${AWS_LAMBDA_RUNTIME_API:-}" ]; then
  exec /usr/local/bin/aws-lambda-rie /var/runtime/bootstrap
fi
exec /var/runtime/bootstrap
EOF
chmod 755 "$STAGE/var/runtime/bootstrap" "$STAGE/lambda-entrypoint.sh"

# The RIE for standalone `docker run` use: the one SAM ships (SAM adds its own copy at
# /var/rapid/aws-lambda-rie in the images it derives, whatever we put here).
SAM_PYTHON=${SAM_PYTHON:-$ROOT/.venv/bin/python}
RIE_SRC=""
if [ -x "$SAM_PYTHON" ]; then
  RIE_SRC=$("$SAM_PYTHON" -c 'import os, samcli; print(os.path.join(os.path.dirname(samcli.__file__), "local", "rapid", "aws-lambda-rie-'"$ARCH"'"))' 2>/dev/null || true)
fi
if [ -n "$RIE_SRC" ] && [ -f "$RIE_SRC" ]; then
  install -D -m 755 "$RIE_SRC" "$STAGE/usr/local/bin/aws-lambda-rie"
else
  log "WARNING: no SAM CLI at $SAM_PYTHON: image has no /usr/local/bin/aws-lambda-rie (SAM still works)"
fi

step "compileall (image's own interpreter)"
COMPILE_DIRS=(/var/runtime "/var/lang/lib/python$PY_MINOR/site-packages")
chroot "$STAGE" "$PYBIN" -m compileall -q -j 0 "${COMPILE_DIRS[@]}" \
  >/dev/null || die "compileall failed"
chroot "$STAGE" /var/lang/bin/python3 -c 'import sys; sys.path[:0]=["/var/runtime"]; import awslambdaric, simplejson; print("    awslambdaric", awslambdaric.__version__ if hasattr(awslambdaric,"__version__") else "ok", "python", sys.version.split()[0])' >&2

# ----------------------------------------------------------------------------- 5. import
step "docker import"
OLD_ID=$(docker image inspect -f '{{.Id}}' "$TAG_ARCH" 2>/dev/null || true)
PYVER=$(chroot "$STAGE" "$PYBIN" -c 'import sys; print(sys.version.split()[0])')
tar --numeric-owner -C "$STAGE" -c . | docker import --platform "linux/$DEB_ARCH" \
  --change "ENV LANG=C.UTF-8" \
  --change "ENV TZ=:/etc/localtime" \
  --change "ENV PATH=/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin" \
  --change "ENV LD_LIBRARY_PATH=/var/lang/lib:/lib64:/usr/lib64:/var/runtime:/var/runtime/lib:/var/task:/var/task/lib:/opt/lib" \
  --change "ENV LAMBDA_TASK_ROOT=/var/task" \
  --change "ENV LAMBDA_RUNTIME_DIR=/var/runtime" \
  --change "WORKDIR /var/task" \
  --change 'ENTRYPOINT ["/lambda-entrypoint.sh"]' \
  --change "LABEL lambda-standin.recipe=$RECIPE lambda-standin.suite=$SUITE lambda-standin.python=$PYVER lambda-standin.awslambdaric=$AWSLAMBDARIC_VERSION" \
  - "$TAG_ARCH" >/dev/null
docker tag "$TAG_ARCH" "$TAG_PLAIN"
docker tag "$TAG_ARCH" "$TAG_LOCAL"
log "$TAG_ARCH = $TAG_PLAIN = $TAG_LOCAL, $(docker image inspect -f '{{.Size}}' "$TAG_ARCH" | numfmt --to=iec), python $PYVER"
rm -rf "$STAGE"

# ----------------------------------------------------------------------------- 6. stale SAM images
# With --skip-pull-image SAM never notices a new base under an existing derived image.
NEW_ID=$(docker image inspect -f '{{.Id}}' "$TAG_ARCH")
if [ -n "$OLD_ID" ] && [ "$OLD_ID" != "$NEW_ID" ]; then
  step "removing SAM images derived from the previous base"
  docker images --format '{{.Repository}}:{{.Tag}}' \
    | grep -E "^($REPO:$PY_MINOR-rapid-|samcli/lambda-python:$PY_MINOR-|lambda-standin/python:rapid-)" \
    | xargs -r docker rmi -f >/dev/null || true
  docker rmi "$OLD_ID" >/dev/null 2>&1 || true
fi

# ----------------------------------------------------------------------------- 7. self-test
if [ "$SELFTEST" = 1 ] && [ -n "$RIE_SRC" ]; then
  step "self-test: docker run IMAGE handler + one invoke over loopback"
  T=$(mktemp -d)
  cat > "$T/selftest.py" <<'EOF'
import sys
def handler(event, context):
    return {"ok": True, "python": sys.version.split()[0], "echo": event, "fn": context.function_name}
EOF
  chmod -R a+rX "$T"
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  CID=$(docker run -d --rm -p "127.0.0.1:$PORT:8080" -v "$T:/var/task:ro" "$TAG_ARCH" selftest.handler)
  OUT=""
  for _ in $(seq 1 40); do
    OUT=$(curl -fsS --max-time 5 -d '{"ping":1}' "http://127.0.0.1:$PORT/2015-03-31/functions/function/invocations" 2>/dev/null) && break
    sleep 0.25
  done
  docker rm -f "$CID" >/dev/null 2>&1 || true
  rm -rf "$T"
  case "$OUT" in
    *'"ok": true'*|*'"ok":true'*) log "invoke -> $OUT" ;;
    *) die "self-test failed: '$OUT'" ;;
  esac
fi
finish
