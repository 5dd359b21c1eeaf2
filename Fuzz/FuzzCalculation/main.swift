import Foundation
import FuzzSupport
import PorticoJSON

@testable import PorticoWorkflow

FuzzSupport.run { data, size in fuzzCalculation(data!, size) }

/// libFuzzer target: the workflows' calculation language. Any text either is refused with a
/// `WorkflowError` when parsed or evaluated, or evaluates to a value that writes as JSON; no
/// input, over variables that hold the numbers and text that once trapped the process (1e300,
/// Int64's ends, "nan", 64 KiB of text), may end the process.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzCalculation(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let calculation = try? Calculation(text) else { return 0 }
    guard let value = try? calculation.evaluate(Hostile.variables) else { return 0 }
    let written = value.serializedString
    guard (try? JSONParser.parse(written)) != nil else { fatalError("a result does not write as JSON: \(written.prefix(200))") }
    return 0
}

enum Hostile {
    static let variables = Variables(
        context: [
            "data": [
                "big": 1e300, "small": -1e300, "tiny": 1e-300, "max": .int(.max), "min": .int(.min), "zero": 0, "minusOne": -1,
                "text": "1e300", "nan": "nan", "inf": "-inf", "huge": "1e999", "long": .string(String(repeating: "ab", count: 30000)),
                "date": "2026-11-27 10:00:00", "far": "9999-12-31T23:59:59Z", "list": [1, "2", 1e300], "object": ["$ne": "x"],
            ]
        ], jobs: ["q": ["total": 2.5, "rows": [["n": 1]]]], now: Date(timeIntervalSince1970: 1_795_000_000))
}
