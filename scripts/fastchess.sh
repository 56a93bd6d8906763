#!/usr/bin/env bash
# The project's match settings around fastchess (bash ../shared/tools/build-fastchess.sh):
# the 8moves_v3 book in random order with a seed, each opening played with both colours,
# 2 games at once, a PGN of every game, and the score reported every 50 games. Everything
# else (engines, limits, rounds, SPRT, adjudication) is passed through. Example, a network
# against the built-in one at 25,000 nodes a move:
#
#   scripts/fastchess.sh -srand 7 -pgnout file=net.pgn \
#     -engine cmd=target/release/ferrite name=new option.EvalFile=net.nnue \
#     -engine cmd=target/release/ferrite name=old \
#     -each proto=uci tc=inf nodes=25000 option.Hash=64 option.Threads=1 \
#     -rounds 200 -sprt elo0=0 elo1=10 alpha=0.05 beta=0.05 model=normalized
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
book=${BOOK:-${FERRITE_SHARED:-$here/../../shared}/openings/8moves_v3.epd}
exec fastchess -openings file="$book" format=epd order=random -repeat \
  -concurrency "${CONCURRENCY:-2}" -ratinginterval 50 -report penta=true "$@"
