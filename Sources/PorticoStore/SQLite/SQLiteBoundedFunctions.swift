import CSQLite

/// Replacements, on datasource connections only, for the SQLite functions whose work grows faster
/// than their input: `instr` and `replace` search quadratically, `trim` with a character set
/// compares each character of the text with each of the set, and `printf` repeats a character as
/// often as a width asks. One such call runs inside one step of SQLite's virtual machine, where
/// neither the progress handler nor `sqlite3_interrupt` can stop it, so a single call from
/// outside could hold a worker for minutes. These give SQLite's own results on valid text in time
/// linear in their input (`printf` checks its widths, then asks SQLite's own on a private
/// connection).
enum SQLiteBoundedFunctions {
    /// Registers the replacements on `connection` (SQLite looks functions up by name and argument
    /// count, so these take the place of the built-in ones there).
    static func install(on connection: SQLiteConnection) {
        let db = connection.handle
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(db, "instr", 2, flags, nil, { context, _, arguments in SQLiteBoundedFunctions.instr(context!, arguments!) }, nil, nil, nil)
        sqlite3_create_function_v2(
            db, "replace", 3, flags, nil, { context, _, arguments in SQLiteBoundedFunctions.replace(context!, arguments!) }, nil, nil, nil)
        for (name, sides) in [("trim", 3), ("ltrim", 1), ("rtrim", 2)] {
            sqlite3_create_function_v2(
                db, name, 2, flags, UnsafeMutableRawPointer(bitPattern: sides),
                { context, _, arguments in SQLiteBoundedFunctions.trim(context!, arguments!, sides: Int(bitPattern: sqlite3_user_data(context))) }, nil, nil,
                nil)
        }
        let owner = Unmanaged.passUnretained(connection).toOpaque()
        for name in ["printf", "format"] {
            sqlite3_create_function_v2(
                db, name, -1, flags, owner,
                { context, count, arguments in
                    let connection = Unmanaged<SQLiteConnection>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
                    connection.printf(context!, arguments: UnsafeBufferPointer(start: arguments, count: Int(count)))
                }, nil, nil, nil)
        }
    }

    /// The bytes of a value as text (or as a blob), with their count; `nil` for NULL.
    static func bytes(_ value: OpaquePointer?, blob: Bool = false) -> UnsafeBufferPointer<UInt8>? {
        guard sqlite3_value_type(value) != SQLITE_NULL else { return nil }
        if blob {
            let count = Int(sqlite3_value_bytes(value))
            guard let base = sqlite3_value_blob(value) else { return UnsafeBufferPointer(start: nil, count: 0) }
            return UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: count)
        }
        guard let text = sqlite3_value_text(value) else { return nil }
        return UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value)))
    }

    /// Where `needle` first occurs in `haystack` at or after `start`.
    static func find(_ needle: UnsafeBufferPointer<UInt8>, in haystack: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard needle.count <= haystack.count - start else { return nil }
        guard needle.count > 0 else { return start }
        guard let base = haystack.baseAddress, let found = portico_memmem(base + start, haystack.count - start, needle.baseAddress, needle.count)
        else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    static func isContinuation(_ byte: UInt8) -> Bool { byte & 0xC0 == 0x80 }

    /// `instr(X, Y)`: one more than the characters (bytes, for two blobs) before the first `Y` in
    /// `X`, 0 when there is none, NULL when either is NULL.
    static func instr(_ context: OpaquePointer, _ arguments: UnsafeMutablePointer<OpaquePointer?>) {
        let haystackType = sqlite3_value_type(arguments[0])
        let needleType = sqlite3_value_type(arguments[1])
        guard haystackType != SQLITE_NULL, needleType != SQLITE_NULL else { return sqlite3_result_null(context) }
        let asBytes = haystackType == SQLITE_BLOB && needleType == SQLITE_BLOB
        guard let haystack = bytes(arguments[0], blob: asBytes), let needle = bytes(arguments[1], blob: asBytes) else {
            return sqlite3_result_error_nomem(context)
        }
        guard needle.count > 0 else { return sqlite3_result_int(context, 1) }
        // SQLite steps through text a character at a time, so a match counts only where a character
        // starts (or at the very start). A needle that starts with a continuation byte can match
        // nowhere else; any other needle's matches all start characters.
        if !asBytes, isContinuation(needle[0]) {
            let atStart = haystack.count >= needle.count && haystack.prefix(needle.count).elementsEqual(needle)
            return sqlite3_result_int(context, atStart ? 1 : 0)
        }
        guard let offset = find(needle, in: haystack, from: 0) else { return sqlite3_result_int(context, 0) }
        if asBytes || offset == 0 { return sqlite3_result_int64(context, Int64(offset + 1)) }
        var characters: Int64 = 2  // the start, and the character the match begins
        for index in 1..<offset where !isContinuation(haystack[index]) { characters += 1 }
        sqlite3_result_int64(context, characters)
    }

    /// `replace(X, Y, Z)`: every `Y` in `X` replaced by `Z`, left to right; NULL when any is
    /// NULL, `X` unchanged when `Y` is empty.
    static func replace(_ context: OpaquePointer, _ arguments: UnsafeMutablePointer<OpaquePointer?>) {
        guard let text = bytes(arguments[0]), let pattern = bytes(arguments[1]) else { return sqlite3_result_null(context) }
        // SQLite reads the pattern as a C string: one that starts with NUL is empty, and leaves X as it was.
        guard pattern.count > 0, pattern[0] != 0 else { return sqlite3_result_value(context, arguments[0]) }
        guard let replacement = bytes(arguments[2]) else { return sqlite3_result_null(context) }
        let limit = Int(sqlite3_limit(sqlite3_context_db_handle(context), SQLITE_LIMIT_LENGTH, -1))
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var start = 0
        while let offset = find(pattern, in: text, from: start) {
            out.append(contentsOf: text[start..<offset])
            out.append(contentsOf: replacement)
            start = offset + pattern.count
            if out.count > limit { return sqlite3_result_error_toobig(context) }
        }
        out.append(contentsOf: text[start...])
        guard out.count <= limit else { return sqlite3_result_error_toobig(context) }
        out.withUnsafeBufferPointer { result(context, $0[...]) }
    }

    /// Sets the function's result to `bytes` as text (SQLite copies them).
    static func result(_ context: OpaquePointer, _ bytes: Slice<UnsafeBufferPointer<UInt8>>) {
        guard let base = bytes.base.baseAddress, !bytes.isEmpty else { return sqlite3_result_text(context, "", 0, SQLiteConnection.transient) }
        let start = UnsafeRawPointer(base + bytes.startIndex).assumingMemoryBound(to: CChar.self)
        sqlite3_result_text64(context, start, UInt64(bytes.count), SQLiteConnection.transient, UInt8(SQLITE_UTF8))
    }

    /// The characters of a set as SQLite reads them (a lead byte and the continuation bytes after
    /// it), up to its first NUL, each with its place in the set: SQLite takes the first that
    /// matches. A character is packed with its length into an integer; `nil` for a set with a
    /// "character" of more than seven bytes, which only text that is not UTF-8 has.
    struct CharacterSet {
        var places: [UInt64: Int] = [:]
        /// The lengths its characters have, shortest first.
        var lengths: [Int] = []

        init?(_ set: UnsafeBufferPointer<UInt8>) {
            var index = 0
            var place = 0
            while index < set.count, set[index] != 0 {
                let end = SQLiteBoundedFunctions.characterEnd(set, at: index)
                guard let packed = Self.pack(set, index..<end) else { return nil }
                if places[packed] == nil { places[packed] = place }
                if !lengths.contains(end - index) { lengths.append(end - index) }
                place += 1
                index = end
            }
            lengths.sort()
        }

        var isEmpty: Bool { places.isEmpty }

        /// The length of the set's first character (in set order) that `text` has in one of the places `range(length)` gives.
        func match(_ text: UnsafeBufferPointer<UInt8>, _ range: (Int) -> Range<Int>?) -> Int? {
            var best: (place: Int, length: Int)?
            for length in lengths {
                guard let bytes = range(length), let packed = Self.pack(text, bytes), let place = places[packed] else { continue }
                if best == nil || place < best!.place { best = (place, length) }
            }
            return best?.length
        }

        static func pack(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt64? {
            guard range.count <= 7 else { return nil }
            var packed = UInt64(range.count) << 56
            for (shift, index) in range.enumerated() { packed |= UInt64(bytes[index]) << (8 * shift) }
            return packed
        }
    }

    /// The end of the character that starts at `index`: SQLite's own rule (a byte of 0xC0 or more
    /// takes the continuation bytes after it).
    static func characterEnd(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        var end = index + 1
        if bytes[index] >= 0xC0 { while end < bytes.count, isContinuation(bytes[end]) { end += 1 } }
        return end
    }

    /// `trim(X, Y)`, `ltrim(X, Y)`, `rtrim(X, Y)`: `X` without the characters of `Y` at its start
    /// (`sides` 1), its end (2) or both (3); NULL when either is NULL. At most seven lengths are
    /// tried at each step, where SQLite compares every character of the set.
    static func trim(_ context: OpaquePointer, _ arguments: UnsafeMutablePointer<OpaquePointer?>, sides: Int) {
        guard let text = bytes(arguments[0]), let setBytes = bytes(arguments[1]) else { return sqlite3_result_null(context) }
        guard let set = CharacterSet(setBytes) else {
            return sqlite3_result_error(context, "trim: the characters to remove are not valid text", -1)
        }
        var start = 0
        var end = text.count
        if !set.isEmpty {
            if sides & 1 != 0 {
                while start < end, let length = set.match(text, { start + $0 <= end ? start..<(start + $0) : nil }) { start += length }
            }
            if sides & 2 != 0 {
                while end > start, let length = set.match(text, { end - $0 >= start ? (end - $0)..<end : nil }) { end -= length }
            }
        }
        result(context, text[start..<end])
    }

    /// The widths and precisions a `printf` format asks for, with the arguments its `*`s take:
    /// the largest of them, or `nil` for a format that asks for none.
    static func largestWidth(format: UnsafeBufferPointer<UInt8>, arguments: UnsafeBufferPointer<OpaquePointer?>) -> Int64? {
        var largest: Int64?
        var argument = 1
        func note(_ value: Int64) { largest = max(largest ?? 0, value) }
        // A negative width left-justifies; its size is what counts.
        func magnitude(_ value: Int64) -> Int64 { value == .min ? .max : abs(value) }
        func nextInteger() -> Int64 {
            defer { argument += 1 }
            return argument < arguments.count ? sqlite3_value_int64(arguments[argument]) : 0
        }
        func digits(_ index: inout Int) -> Int64 {
            var value: Int64 = 0
            while index < format.count, format[index] >= 0x30, format[index] <= 0x39 {
                value = min(value * 10 + Int64(format[index] - 0x30), Int64(Int32.max) + 1)
                index += 1
            }
            return value
        }
        var index = 0
        while index < format.count {
            guard format[index] == UInt8(ascii: "%") else {
                index += 1
                continue
            }
            index += 1
            while index < format.count, "-+ #!0,".utf8.contains(format[index]) { index += 1 }
            if index < format.count, format[index] == UInt8(ascii: "*") {
                note(magnitude(nextInteger()))
                index += 1
            } else {
                note(digits(&index))
            }
            if index < format.count, format[index] == UInt8(ascii: ".") {
                index += 1
                if index < format.count, format[index] == UInt8(ascii: "*") {
                    note(magnitude(nextInteger()))
                    index += 1
                } else {
                    note(digits(&index))
                }
            }
            while index < format.count, format[index] == UInt8(ascii: "l") { index += 1 }
            guard index < format.count else { break }
            let conversion = format[index]
            index += 1
            // Every conversion but %% and %n takes an argument.
            if conversion != UInt8(ascii: "%"), conversion != UInt8(ascii: "n") { argument += 1 }
        }
        return largest
    }
}
