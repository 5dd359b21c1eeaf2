import Testing

@testable import PorticoStore

@Suite struct TracesTests {
    @Test func aStatementIsNamedByItsFirstKeywordOnly() {
        #expect(Traces.operation(of: "SELECT \"a\" FROM t WHERE x = ?") == "SELECT")
        #expect(Traces.operation(of: "  (select 1)") == "SELECT")
        #expect(Traces.operation(of: "insert into t values (?)") == "INSERT")
        #expect(Traces.operation(of: "VACUUM") == "SQL", "only known verbs name a span: no text of the statement leaks")
        #expect(Traces.operation(of: "") == "SQL")
    }

    @Test func offNothingIsAddedOrSent() async {
        // The test process never bootstraps a tracer.
        #expect(!Traces.isOn)
        #expect(Traces.sqlComment() == nil)
        #expect(Traces.currentHeaders().isEmpty)
        #expect(Traces.context(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: nil) == nil)
        let ran = await Traces.span("x") { span in span == nil }
        #expect(ran)
    }

    @Test func aFailedSpanNamesTheErrorsKindNotItsMessage() {
        let error = StoreError(kind: .constraint, message: "duplicate key value (email)=(ada@example.com)", sql: "INSERT …")
        #expect(Traces.errorType(error) == "StoreError.constraint")
        #expect(Traces.errorType(CancellationError()) == "CancellationError")
    }
}
