# class/: class mode, one PostgreSQL server for a room (`hotrow class`),
# and the recording the lab runner calls. Depends on kit/ (db) and libpq.
CLASS_SRC := $(wildcard class/*.c)
CLASS_LIB := $(BUILD)/libhotrow-class.a
$(CLASS_LIB): $(CLASS_SRC:%.c=$(BUILD)/obj/%.o)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $^
ALL += $(CLASS_LIB)
