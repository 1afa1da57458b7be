# kit/: what labs and benches run against (db, load, store, log, failpoints).
# It depends on no other part of hotrow: the lab drivers' support, which
# calls the engine, is in labs/driver/. The latency histogram it shares
# with the engine (util/hist.c) goes into this library too, so that the
# labs link the kit alone.
KIT_SRC := $(wildcard kit/*.c)
KIT_LIB := $(BUILD)/libhotrow-kit.a
$(KIT_LIB): $(KIT_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/util/hist.o
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL += $(KIT_LIB)
