extension MCPEndpoint {
    /// Whether an Accept header admits `type` (lower-case `major/minor`), directly or by a wildcard.
    /// Read byte by byte: it runs on every request.
    static func accepts(_ accept: String, _ type: String) -> Bool {
        let wanted = Array(type.utf8)
        let slash = wanted.firstIndex(of: UInt8(ascii: "/")) ?? wanted.count
        var accept = accept
        return accept.withUTF8 { header in
            var start = 0
            while start < header.count {
                var end = start
                while end < header.count, header[end] != UInt8(ascii: ",") { end += 1 }
                // One media range: its type ends at ';' (parameters) or ','; spaces around it are allowed.
                var typeEnd = start
                while typeEnd < end, header[typeEnd] != UInt8(ascii: ";") { typeEnd += 1 }
                var from = start, to = typeEnd
                while from < to, header[from] == 0x20 || header[from] == 0x09 { from += 1 }
                while to > from, header[to - 1] == 0x20 || header[to - 1] == 0x09 { to -= 1 }
                let range = UnsafeBufferPointer(rebasing: header[from..<to])
                if Self.asciiEqualsIgnoringCase(range, wanted[...])
                    || Self.asciiEqualsIgnoringCase(range, Self.anyMedia[...])
                    || (range.count == slash + 2 && range[slash + 1] == UInt8(ascii: "*")
                        && Self.asciiEqualsIgnoringCase(UnsafeBufferPointer(rebasing: range[..<(slash + 1)]), wanted[...(slash)]))
                {
                    return true
                }
                start = end + 1
            }
            return false
        }
    }

    /// Whether a Content-Type names JSON (`application/json`, with or without parameters).
    static func isJSON(_ contentType: String) -> Bool {
        let prefix = Self.jsonMedia
        var text = contentType
        return text.withUTF8 { bytes in
            bytes.count >= prefix.count && Self.asciiEqualsIgnoringCase(UnsafeBufferPointer(rebasing: bytes[..<prefix.count]), prefix[...])
        }
    }

    private static let anyMedia = Array("*/*".utf8)
    private static let jsonMedia = Array("application/json".utf8)

    private static func asciiEqualsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: ArraySlice<UInt8>) -> Bool {
        guard bytes.count == lowercase.count else { return false }
        var index = lowercase.startIndex
        for byte in bytes {
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if lowered != lowercase[index] { return false }
            index += 1
        }
        return true
    }
}
