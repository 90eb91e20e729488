# needle in a container: build with `docker build -t needle .` at the top of
# the repository, push it to your registry, and name it by digest in the
# manifests of deploy/k8s/ (docs/cluster.md). It holds the binary, the
# libraries it links or loads (libcurl at its first request, libcrypto at its
# first digest) and the shipped suites; mount the tokenizer files of the model
# under test (a model folder: tokenizer.json, tokenizer_config.json) and pass
# them as --tokenizer. It runs as an unprivileged user and writes only under
# HOME (/tmp: the tokenizer cache) and --out.
FROM debian:12 AS build
COPY . /src
WORKDIR /src
RUN sh tests/setup.sh system && make -j"$(nproc)" all && make install PREFIX=/opt/needle

FROM debian:12-slim
RUN apt-get update && apt-get install -y --no-install-recommends \
      ca-certificates libcurl4 libcjson1 libpcre2-8-0 libpng16-16 libssl3 \
      libsentencepiece0 libutf8proc2 libstdc++6 && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/needle /usr/local
USER 65532:65532
ENV HOME=/tmp
CMD ["needle", "--help"]
