# util/: what every part of hotrow may use, on libc alone. Most of it is
# header-only; the histogram (hist.c) is one object that goes into both the
# engine's and the kit's library, so that neither links the other.
UTIL_SRC := $(wildcard util/*.c)
UTIL_OBJ := $(UTIL_SRC:%.c=$(BUILD)/obj/%.o)
