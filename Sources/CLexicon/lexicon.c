// WordNet 3.0, compiled by scripts/make_lexicon.py (the Makefile runs it before every build,
// from Debian's wordnet-base), embedded here so a deployed binary needs no file beside it.
#include "lexicon.h"

#if !__has_embed("wordnet.bin")
#error "Sources/CLexicon/wordnet.bin is missing: make build makes it (python3 scripts/make_lexicon.py, from Debian's wordnet-base)"
#endif

static const unsigned char table[] __attribute__((aligned(16))) = {
#embed "wordnet.bin"
};

static const char notice[] =
    "WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. "
    "THIS SOFTWARE AND DATABASE IS PROVIDED \"AS IS\" AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES, "
    "EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES "
    "OF MERCHANTABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE OF THE LICENSED SOFTWARE, DATABASE OR "
    "DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS. "
    "(The whole licence: Sources/CLexicon/LICENSE-WordNet.txt.)";

const unsigned char *portico_lexicon_bytes(void) { return table; }
unsigned long portico_lexicon_size(void) { return sizeof(table); }
const char *portico_lexicon_notice(void) { return notice; }
