# JNI binding (doc/jni.md): $(BUILD)/libkstats_jni.so and $(BUILD)/kstats.jar,
# built by make when javac is found.  The .so links its own -fPIC build of
# libkstats (its errors name the fixes kstats read's do: btfreader/tool.c);
# nobody else's objects change flags.
JAVAC    ?= $(shell command -v javac 2>/dev/null)
JDK_HOME := $(if $(JAVAC),$(patsubst %/bin/javac,%,$(realpath $(JAVAC))))
JNI_DIR  := $(BUILD)/jni
JNI_SO   := $(BUILD)/libkstats_jni.so
JNI_JAR  := $(BUILD)/kstats.jar
JNI_SRCS := $(shell find btfreader/jni/java -name '*.java')
JNI_PIC_OBJS := $(patsubst %.c,$(JNI_DIR)/pic/%.o,$(wildcard btfreader/*.c) \
		btfreader/jni/kstats_jni.c)
JNI_TESTS := $(JNI_DIR)/tests/.stamp $(JNI_DIR)/libjnilayouts.so

.PHONY: jni bench-jni
all: jni
ifneq ($(JAVAC),)
jni: $(JNI_SO) $(JNI_JAR)
test-build: $(JNI_TESTS)
else
jni:
	@echo "jni: no javac: skipping libkstats_jni.so and kstats.jar (make deps installs a JDK)"
endif

$(JNI_DIR)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -I$(JDK_HOME)/include -I$(JDK_HOME)/include/linux -c $< -o $@

$(JNI_SO): $(JNI_PIC_OBJS)
	$(CC) $(LDFLAGS) -shared -Wl,-z,defs -o $@ $^ $(LDLIBS)

$(JNI_JAR): $(JNI_SRCS)
	@rm -rf $(JNI_DIR)/classes && mkdir -p $(JNI_DIR)/classes
	$(JAVAC) -Xlint:all -Werror -d $(JNI_DIR)/classes $^
	$(JDK_HOME)/bin/jar cf $@ -C $(JNI_DIR)/classes .

# tests/sh/test_jni.sh runs these against the jar; the helper library pins
# reader_layouts.bpf's maps for the test.
$(JNI_DIR)/tests/.stamp: $(wildcard tests/jni/*.java) $(JNI_JAR) $(JNI_SO)
	@rm -rf $(@D) && mkdir -p $(@D)
	$(JAVAC) -Xlint:all -Werror -cp $(JNI_JAR) -d $(@D) $(filter %.java,$^)
	@touch $@

$(JNI_DIR)/libjnilayouts.so: $(JNI_DIR)/pic/tests/jni/layouts_native.o
	$(CC) $(LDFLAGS) -shared -Wl,-z,defs -o $@ $^ $(LDLIBS)

# bench/jni: a Java read of a 10k-entry map against the C reader, in one
# JVM (doc/jni.md).  BENCH_ARGS="ENTRIES [REPEAT]".
JNI_BENCH_SO := $(BUILD)/bench/jni/libreadbench.so
$(JNI_BENCH_SO): $(JNI_DIR)/pic/bench/jni/bench_native.o $(filter-out %/kstats_jni.o,$(JNI_PIC_OBJS))
	$(CC) $(LDFLAGS) -shared -Wl,-z,defs -o $@ $^ $(LDLIBS)

$(BUILD)/bench/jni/classes/.stamp: bench/jni/ReadBench.java $(JNI_JAR)
	@rm -rf $(@D) && mkdir -p $(@D)
	$(JAVAC) -Xlint:all -Werror -cp $(JNI_JAR) -d $(@D) $<
	@touch $@

bench-jni: deps
	@$(MAKE) --no-print-directory jni $(JNI_BENCH_SO) $(BUILD)/bench/jni/classes/.stamp
	java -XX:-UsePerfData -Dkstats.jni.library=$(abspath $(JNI_SO)) \
		-Dreadbench.library=$(abspath $(JNI_BENCH_SO)) \
		-cp $(JNI_JAR):$(BUILD)/bench/jni/classes ReadBench $(BUILD)/bpf/compaction.bpf \
		/sys/fs/bpf/kernelstats-bench-$$$$-jni $(BENCH_ARGS)
