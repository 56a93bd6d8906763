# OpenBench and other testers build engines with `make EXE=<name>`: this builds the release
# binary and copies it to that name. `make` alone leaves it at ./ferrite.

EXE ?= ferrite
CARGO ?= cargo

.PHONY: all clean

all:
	$(CARGO) build --release --locked
	cp target/release/ferrite$(if $(filter Windows_NT,$(OS)),.exe,) $(EXE)

clean:
	$(CARGO) clean
