# kit/: what labs and benches run against (db, load, store, log, failpoints).
# It depends on no other part of hotrow but util/: the lab drivers' support, which
# calls the engine, is in labs/driver/.
KIT_SRC := $(wildcard kit/*.c)
KIT_LIB := $(BUILD)/libhotrow-kit.a
$(KIT_LIB): $(KIT_SRC:%.c=$(BUILD)/obj/%.o) $(UTIL_OBJ)
	@mkdir -p $(dir $@)
	$(AR) rcs $@ $^
ALL += $(KIT_LIB)
