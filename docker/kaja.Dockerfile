# syntax=docker/dockerfile:1
# kaja's gateway (`kaja serve --http`) as a container, for MCP clients that reach it over
# Streamable HTTP. Build from the repository root:
#   docker build -f docker/kaja.Dockerfile -t kaja-gateway .
# The README's "kaja in Docker" section shows the `docker run` line, with the folders of
# every persona mounted at their own paths by `kaja docker mounts`.

# --- build: the Debian package, the same way `cpack -G DEB` makes it on a Debian machine ----
FROM debian:bookworm-slim AS build
# CMakeLists.txt asks for GoogleTest at configure time even when only kaja is built; npm
# fetches the bun kaja ships (pinned by marketplace/runtime/package-lock.json); dpkg-dev and
# file let cpack compute the package's dependencies with dpkg-shlibdeps.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      g++ cmake make pkg-config ca-certificates dpkg-dev file nodejs npm \
      libtomlplusplus-dev nlohmann-json3-dev libcurl4-openssl-dev libarchive-dev libboost-dev \
      libssl-dev nettle-dev libicu-dev libgtest-dev libgmock-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cd marketplace/runtime && npm ci --no-audit --no-fund --loglevel=error
# Only kaja and its man page and completions, not the tests: the package needs nothing else.
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON \
 && cmake --build /build -j"$(nproc)" --target kaja kaja_docs \
 && cd /build && cpack -G DEB -B /deb \
 && cp /deb/kaja_*.deb /kaja.deb

# --- runtime: the package installed as apt installs it, and nothing to build with ----------
FROM debian:bookworm-slim AS runtime
COPY --from=build /kaja.deb /tmp/kaja.deb
# apt resolves the package's dependencies (from dpkg-shlibdeps); node runs npm abilities
# whose programs ask for it by name; tini is PID 1, so orphans are reaped and signals reach
# kaja.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      /tmp/kaja.deb ca-certificates nodejs tini \
 && rm -rf /var/lib/apt/lists/* /tmp/kaja.deb \
 && kaja --version

# A fixed, non-root uid. `docker run --user "$(id -u):$(id -g)"` replaces it, so that
# files kaja changes in mounted folders keep their owner.
RUN groupadd --system --gid 10001 kaja \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/kaja --create-home \
      --shell /usr/sbin/nologin kaja \
 && chmod 1777 /var/lib/kaja
ENV HOME=/var/lib/kaja \
    XDG_DATA_HOME=/var/lib/kaja/data \
    NO_COLOR=1
WORKDIR /var/lib/kaja
USER 10001:10001
EXPOSE 8931
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/bin/kaja"]
# Every address a client can reach needs the bearer token: mount it as a file.
CMD ["serve", "--http", "0.0.0.0:8931", "--token-file", "/run/secrets/kaja-token"]
