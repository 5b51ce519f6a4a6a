# Thin wrapper over CMake so a user types two commands: `make run` and `make test`.
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=
ifeq ($(CI),true)
  CMAKE_FLAGS += -DVKF_WERROR=ON
endif

.PHONY: all setup build run test test-asan clean

all: build

setup:
	@tools/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

# The main job on the default models: classify the sample images (the built-in tiny checkpoint has
# random weights; pass a real one with `vkf classify --model DIR`), then embed example sentences
# with the installed all-MiniLM-L6-v2 (real weights) and print their cosine similarities.
run: build
	./$(BUILD)/tools/vkf classify assets/images/*.jpg
	./$(BUILD)/tools/vkf embed "A man is eating food." "A man is eating a piece of bread." \
	  "The girl is carrying a baby." "A man is riding a horse."

# The whole suite; ends with ctest's summary.
test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# The same suite under AddressSanitizer + UndefinedBehaviorSanitizer.
test-asan:
	$(MAKE) test BUILD=build-asan CMAKE_FLAGS="$(CMAKE_FLAGS) -DVKF_SANITIZE=ON"

clean:
	rm -rf build build-asan
