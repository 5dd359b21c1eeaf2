import FuzzSupport
import PorticoJSON
import PorticoStore

@testable import PorticoData

FuzzSupport.run { data, size in fuzzFilter(data!, size) }

/// libFuzzer target: the filter compiler over the Chinook catalog. Any filter either is refused
/// with a `DataError` or compiles to SQL that SQLite prepares (unless it hits one of SQLite's
/// limits, which the store turns into guidance).
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzFilter(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0, let filter = FuzzSupport.json(data.advanced(by: 1), size - 1) else { return 0 }
    let collection = FuzzSupport.collections[Int(data[0]) % FuzzSupport.collections.count]
    let compiler = FilterCompiler(catalog: FuzzSupport.catalog, flavor: .sqlite)
    let condition: SQLFragment?
    do {
        condition = try compiler.compile(filter, on: collection, alias: "t0")
    } catch {
        return 0  // refused with a message: fine
    }
    var select = SQLFragment("SELECT 1 FROM ")
    select.append(table: collection.tableName, as: "t0")
    if let condition {
        select.append(" WHERE ")
        select.append(condition)
    }
    let sql = select.rendered().sql
    if let error = Target.prepare(sql), error.kind != .tooComplex {
        fatalError("a compiled filter does not prepare: \(error.message)\nfilter: \(filter.serializedString.prefix(300))\nsql: \(sql.prefix(500))")
    }
    return 0
}

enum Target {
    static let prepare = FuzzSupport.preparer()
}
