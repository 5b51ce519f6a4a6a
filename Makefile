# Thin wrapper over CMake so a user types two commands: `make run` and `make test`.
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=
ifeq ($(CI),true)
  CMAKE_FLAGS += -DVKF_WERROR=ON
endif

PREFIX ?= /usr/local

.PHONY: all setup build run install test test-suite test-lanes test-asan test-coopmat fuzz clean

all: build

setup:
	@tools/dev/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVKF_SPV_CACHE=$(CURDIR)/.cache/spv \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# The main job on the default models: classify the Fashion-MNIST test-split samples (true label in
# each file name) with the built-in ViT trained on Fashion-MNIST, embed example sentences with the
# installed all-MiniLM-L6-v2 (real weights) and print their cosine similarities, then answer a
# question with the installed SmolLM2-135M-Instruct (its Q4_1 GGUF, through its chat template).
run: build
	./$(BUILD)/tools/vkf classify --top 2 assets/images/fashion-mnist/*.png
	./$(BUILD)/tools/vkf embed "A man is eating food." "A man is eating a piece of bread." \
	  "The girl is carrying a baby." "A man is riding a horse."
	echo '[{"role": "user", "content": "What is the capital of France?"}]' | \
	  ./$(BUILD)/tools/vkf chat --greedy --max-new-tokens 48 --messages -

# The library (shared + static), its header, vkformer.pc, the CMake package, vkf and the shipped
# models under PREFIX (docs/install.md).
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# What CI runs (.ci/run): the whole suite, the subgroup-width and bounds lanes, then its
# `asan`-labelled subset (every reader and every CLI path; not the device-kernel sweeps) under
# AddressSanitizer + UndefinedBehaviorSanitizer,
# then the cooperative-matrix lane (Mesa 26 lavapipe from a private sysroot), then the fuzz smoke (its committed crashers and seeds, then every libFuzzer target for 10 s with a
# fixed random seed, so CI explores the same inputs each time; `make fuzz` alone explores anew).
test: test-suite
	@$(MAKE) --no-print-directory test-lanes
	@$(MAKE) --no-print-directory test-asan CTEST_ARGS="-L asan"
	@$(MAKE) --no-print-directory test-coopmat
	@FUZZ_SEED=1 $(MAKE) --no-print-directory fuzz FUZZ_ARGS="--seconds 10"

# The whole suite alone; ends with ctest's summary. CTEST_ARGS selects (e.g. "-R bpe", "-L cli").
test-suite: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS) $(CTEST_ARGS)

# The suite under AddressSanitizer + UndefinedBehaviorSanitizer (all of it unless CTEST_ARGS says).
test-asan:
	@$(MAKE) --no-print-directory test-suite BUILD=build-asan \
	  CMAKE_FLAGS="$(CMAKE_FLAGS) -DVKF_SANITIZE=ON"

# The kernels at subgroups of 4, 16 and lavapipe's misreported 32/64, with GPU-assisted bounds
# checks: tools/dev/subgroup_lanes.sh (docs/testing.md).
test-lanes: build
	tools/dev/subgroup_lanes.sh $(BUILD)

# The tensor-core kernels on a CPU: tools/coopmat/ci_lane.sh (docs/testing.md).
test-coopmat: build
	tools/coopmat/ci_lane.sh $(BUILD)

# The fuzz targets (clang's libFuzzer, build-fuzz/): FUZZ_ARGS="--seconds 900" for the long run;
# see tools/dev/fuzz.sh --help.
fuzz: setup
	tools/dev/fuzz.sh $(FUZZ_ARGS)

clean:
	rm -rf build build-asan build-fuzz
