#ifndef PORTICO_LEXICON_H
#define PORTICO_LEXICON_H

/// The compiled WordNet 3.0 table (scripts/make_lexicon.py), embedded in the binary.
const unsigned char *portico_lexicon_bytes(void);
unsigned long portico_lexicon_size(void);
/// WordNet's licence notice, which goes with every copy of its database.
const char *portico_lexicon_notice(void);

#endif
