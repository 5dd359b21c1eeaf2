import FuzzSupport
import PorticoJSON

FuzzSupport.run { data, size in fuzzJSON(data!, size) }

/// libFuzzer target: the JSON parser on arbitrary bytes. Whatever parses must write back and
/// parse again to the same value.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let value = try? JSONParser.parse(bytes) else { return 0 }
    let written = value.serialized
    guard let again = try? JSONParser.parse(written) else {
        fatalError("the writer produced JSON the parser refuses: \(String(decoding: written.prefix(200), as: UTF8.self))")
    }
    guard again == value else {
        fatalError("a value changed in a round trip: \(String(decoding: written.prefix(200), as: UTF8.self))")
    }
    _ = value.estimatedSize
    _ = value.prettyString
    return 0
}
