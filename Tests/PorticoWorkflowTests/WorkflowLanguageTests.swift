import Foundation
import PorticoData
import PorticoJSON
import Testing

@testable import PorticoWorkflow

@Suite struct CalculationTests {
    let variables = Variables(
        context: ["data": ["amount": 1200, "title": "Acme", "due": "2026-12-01 10:00:00"]], jobs: ["q": ["total": 2.5]],
        now: Date(timeIntervalSince1970: 1_795_000_000))

    func value(_ expression: String) throws -> JSON { try Calculation(expression).evaluate(variables) }

    @Test func arithmeticFollowsPrecedenceAndKeepsIntegers() throws {
        #expect(try value("1 + 2 * 3") == 7)
        #expect(try value("(1 + 2) * 3") == 9)
        #expect(try value("{{$context.data.amount}} * 0.5") == 600)
        #expect(try value("round({{$context.data.amount}} * 0.05, 2)") == 60)
        #expect(try value("7 / 2") == 3.5)
        #expect(try value("-{{$jobsMapByNodeKey.q.total}}") == -2.5)
        #expect(try value("round(10 / 3, 2)") == 3.33)
    }

    @Test func textComparisonsAndFunctions() throws {
        #expect(try value("concat('Deal ', {{$context.data.title}})") == "Deal Acme")
        #expect(try value("'a' + 1") == "a1")
        #expect(try value("{{$context.data.amount}} >= 1000 && contains({{$context.data.title}}, 'cm')") == true)
        #expect(try value("if({{$context.data.amount}} > 5000, 'big', 'small')") == "small")
        #expect(try value("dateDiff({{$context.data.due}}, '2026-11-28', 'days')") == 3)
        #expect(try value("dateAdd('2026-11-28', 2, 'hours')") == "2026-11-28T02:00:00Z")
        #expect(try value("coalesce({{$context.data.missing}}, 'none')") == "none")
        #expect(try value("false && 1 / 0") == false)
    }

    @Test(arguments: [
        ("system('ls')", "unknown name"), ("1 +", "ends where a value"), ("(1", "not closed"), ("1 / 0", "division by zero"),
        ("{{$env.HOME}}", "unknown variable"), ("'open", "not closed"), ("round(1, 2, 3)", "takes 1 to 2"), ("1 ; 2", "not part of"),
    ])
    func refusesWhatIsNotInTheLanguage(_ expression: String, _ words: String) {
        do {
            _ = try value(expression)
            Issue.record("\(expression) was accepted")
        } catch let error as WorkflowError {
            #expect(error.message.contains(words), "\(expression): \(error.message)")
        } catch {
            Issue.record("\(expression): \(error)")
        }
    }

    /// Numbers from a caller, a record or a stored definition that once trapped the process
    /// (a double past Int converted, an overflowing remainder): each is a value or a refusal now.
    @Test func noNumberEndsTheProcess() throws {
        let hostile = Variables(
            context: [
                "data": ["big": 1e300, "name": "1e300", "nan": "nan", "inf": "inf", "huge": "1e999", "long": .string(String(repeating: "a", count: 60000))]
            ],
            now: Date(timeIntervalSince1970: 1_795_000_000))
        func value(_ expression: String) throws -> JSON { try Calculation(expression).evaluate(hostile) }
        #expect(try value("substring('abc', 1, 9223372036854775807)") == "bc")
        #expect(try value("substring('abc', -9223372036854775807, 2)") == "ab")
        #expect(try value("substring('abc', {{$context.data.big}})") == "")
        #expect(try value("substring('abc', 0, {{$context.data.big}})") == "abc")
        #expect(try value("(-9223372036854775807 - 1) % -1") == 0)
        #expect(try value("9223372036854775807 + 1") == .double(9_223_372_036_854_775_808))
        #expect(try value("round(2.5)") == 3)
        #expect(try value("round({{$context.data.big}})") == .double(1e300))
        for refused in [
            "round(1.5, 99999999999999999999)", "round(1, {{$context.data.big}})", "round(1, {{$context.data.name}})", "round(1, -1)",
            "{{$context.data.big}} * {{$context.data.big}}", "sum({{$context.data.big}}, {{$context.data.big}}) * {{$context.data.big}}",
            "number({{$context.data.nan}})", "number({{$context.data.inf}})", "number({{$context.data.huge}})",
            "dateAdd('2026-01-01', {{$context.data.big}}, 'days')", "dateAdd('2026-01-01', 9000000, 'weeks')",
            "replace({{$context.data.long}}, 'a', 'bb')", "substring('abc', {{$context.data.nan}})",
        ] {
            #expect(throws: WorkflowError.self, "\(refused)") { try value(refused) }
        }
        // Text that reads as a double past the finite ones is text, not a number.
        #expect(try value("{{$context.data.huge}} + 1") == "1e9991")
    }

    /// Text that traps Foundation's search on Linux (a target of a letter, a combining accent and a
    /// NUL): `contains`, `replace` and a filter's `$includes` find text as Swift compares it, and answer.
    @Test func noTextEndsTheProcess() throws {
        let text = "'\u{FFFD}\u{307}\u{301}\u{212B}a\u{308}ss\u{307}e\u{301}'"
        let target = "'e\u{301}\u{0}'"
        let empty = Variables(context: [:], now: Date())
        #expect(try Calculation("contains(\(text), \(target))").evaluate(empty) == false)
        #expect(try Calculation("replace(\(text), \(target), 'x')").evaluate(empty) == .string("\u{FFFD}\u{307}\u{301}\u{212B}a\u{308}ss\u{307}e\u{301}"))
        #expect(try Calculation("replace(\(text), 'e\u{301}', 'é!')").evaluate(empty) == .string("\u{FFFD}\u{307}\u{301}\u{212B}a\u{308}ss\u{307}é!"))
        #expect(try Calculation("contains('café', 'é')").evaluate(empty) == true)
        let matcher = FilterMatcher(variables: Variables(context: ["data": ["note": "\u{FFFD}\u{307}\u{301}\u{212B}a\u{308}ss\u{307}e\u{301}"]], now: Date()))
        #expect(try !matcher.matches(["note": ["$includes": "e\u{301}\u{0}"]]))
        #expect(try matcher.matches(["note": ["$includes": "Ä"]]))  // ä written as a and a combining diaeresis
        // Growth past the limit is refused before the text is made, counting only as far as needed.
        #expect(throws: WorkflowError.self) { try Calculation("replace('\(String(repeating: "ab", count: 20000))', 'a', 'xyz')").evaluate(empty) }
        #expect(try Calculation("replace('abab', 'a', 'xyz')").evaluate(empty) == "xyzbxyzb")
    }

    @Test func nestingAndLengthAreBounded() {
        #expect(throws: WorkflowError.self) { try Calculation(String(repeating: "(", count: 200) + "1" + String(repeating: ")", count: 200)) }
        #expect(throws: WorkflowError.self) { try Calculation(String(repeating: "1+", count: 3000) + "1") }
    }
}

@Suite struct FilterMatcherTests {
    let matcher = FilterMatcher(
        variables: Variables(
            context: ["data": ["status": "won", "amount": 50, "tags": "vip,new", "owner": ["name": "Rita"]]], jobs: ["q": ["n": 3]], now: Date()))

    @Test func operatorsOverTheRecordAndVariables() throws {
        #expect(try matcher.matches(["status": "won"]))
        #expect(try matcher.matches(["status": ["$in": ["won", "lost"]], "amount": ["$gt": 10, "$lte": 50]]))
        #expect(try !matcher.matches(["amount": ["$gt": 50]]))
        #expect(try matcher.matches(["owner.name": ["$startsWith": "ri"]]))
        #expect(try matcher.matches(["$or": [["status": "lost"], ["tags": ["$includes": "vip"]]]]))
        #expect(try matcher.matches(["$jobsMapByNodeKey.q.n": ["$eq": "3"]]))
        #expect(try matcher.matches(["missing": ["$empty": true]]))
        #expect(try matcher.matches(["amount": "{{$jobsMapByNodeKey.q.n}}"]) == false)
        #expect(try matcher.matches(["amount": ["$ne": "{{$jobsMapByNodeKey.q.n}}"]]))
    }

    @Test func unknownOperatorsAreRefusedWhenSaved() {
        #expect(throws: WorkflowError.self) { try FilterMatcher.check(["amount": ["$regex": ".*"]], at: "filter") }
        #expect(throws: WorkflowError.self) { try FilterMatcher.check(["$where": "1"], at: "filter") }
    }
}

@Suite struct CronTests {
    func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    @Test func fieldsListsRangesStepsAndNames() throws {
        let monday8 = try Cron("0 8 * * MON", timeZone: "Europe/Paris")
        #expect(monday8.matches(date("2026-11-30T07:00:00Z")))  // 08:00 in Paris, a Monday
        #expect(!monday8.matches(date("2026-11-30T08:00:00Z")))
        #expect(!monday8.matches(date("2026-12-01T07:00:00Z")))
        let every15 = try Cron("*/15 9-17 * * 1-5")
        #expect(every15.matches(date("2026-11-25T09:45:00Z")))
        #expect(!every15.matches(date("2026-11-25T09:46:00Z")))
        #expect(!every15.matches(date("2026-11-29T10:00:00Z")))  // Sunday
        // Day of month and day of week both given: either matches (crontab(5)).
        let either = try Cron("0 0 1 * SUN")
        #expect(either.matches(date("2026-12-01T00:00:00Z")))
        #expect(either.matches(date("2026-11-29T00:00:00Z")))
    }

    @Test(arguments: ["* * * *", "60 * * * *", "* 24 * * *", "5-1 * * * *", "*/0 * * * *", "* * * FOO *"])
    func refusesBadExpressions(_ expression: String) {
        #expect(throws: WorkflowError.self) { try Cron(expression) }
    }

    @Test func refusesAnUnknownTimeZone() {
        #expect(throws: WorkflowError.self) { try Cron("* * * * *", timeZone: "Mars/Olympus") }
    }
}

@Suite struct DefinitionTests {
    @Test func variablesMustNameEarlierNodesOnTheirPath() throws {
        let ok: JSON = [
            [
                "key": "c", "type": "condition", "config": ["filter": ["amount": ["$gt": 1]]],
                "then": [["key": "x", "type": "calculation", "config": ["expression": "1"]]],
            ],
            ["key": "y", "type": "calculation", "config": ["expression": "{{$jobsMapByNodeKey.c.result}}"]],
        ]
        #expect(try WorkflowDefinition(trigger: ["type": "manual"], nodes: ok).allNodes.map(\.key) == ["c", "x", "y"])
        // x runs only on the then branch: a node after the condition cannot count on it.
        let later: JSON = [
            ["key": "c", "type": "condition", "config": ["filter": [:]], "then": [["key": "x", "type": "calculation", "config": ["expression": "1"]]]],
            ["key": "y", "type": "calculation", "config": ["expression": "{{$jobsMapByNodeKey.x}}"]],
        ]
        #expect(throws: WorkflowError.self) { try WorkflowDefinition(trigger: ["type": "manual"], nodes: later) }
    }

    @Test func offsetsAreBoundedBeforeTheyAreConverted() throws {
        func offset(_ value: JSON) throws -> Int64 {
            guard
                case .dateField(_, _, let seconds) = try WorkflowDefinition(
                    trigger: ["type": "schedule", "collection": "Bill", "field": "due", "offset": value], nodes: []
                ).trigger
            else { return .min }
            return seconds
        }
        #expect(try offset("-3d") == -259_200)
        #expect(try offset("3650d") == 315_360_000)
        #expect(try offset(3600) == 3600)
        #expect(try offset(-7200.0) == -7200)
        for refused: JSON in [1e300, -1e300, "9223372036854775807d", "-9223372036854775807w", "3651d", 315_360_001, 1.5, "1e300"] {
            #expect(throws: WorkflowError.self, "\(refused)") { try offset(refused) }
        }
    }

    /// A workflow saved before the offset's bound still loads (every write of its app reads the
    /// app's workflows): its offset is brought within the bound instead of refused.
    @Test func aStoredOffsetPastTheBoundStillLoads() throws {
        func stored(_ offset: JSON) throws -> Trigger {
            try WorkflowDefinition(stored: ["trigger": ["type": "schedule", "collection": "Bill", "field": "due", "offset": offset], "nodes": []]).trigger
        }
        #expect(try stored("4000d") == .dateField(collection: "Bill", field: "due", offset: WorkflowDefinition.maxOffset))
        #expect(try stored(-400_000_000) == .dateField(collection: "Bill", field: "due", offset: -WorkflowDefinition.maxOffset))
        #expect(try stored(90.5) == .dateField(collection: "Bill", field: "due", offset: 90))
        #expect(throws: WorkflowError.self) {
            try WorkflowDefinition(trigger: ["type": "schedule", "collection": "Bill", "field": "due", "offset": "4000d"], nodes: [])
        }
    }

    @Test func triggersAreRead() throws {
        let schedule = try WorkflowDefinition(trigger: ["type": "schedule", "collection": "Bill", "field": "due", "offset": "-3d"], nodes: [])
        #expect(schedule.trigger == .dateField(collection: "Bill", field: "due", offset: -259_200))
        let collection = try WorkflowDefinition(trigger: ["type": "collection", "collection": "Deal", "on": ["create", "update"]], nodes: [])
        #expect(collection.trigger == .collection(collection: "Deal", on: [.create, .update], changed: [], condition: nil))
        #expect(throws: WorkflowError.self) { try WorkflowDefinition(trigger: ["type": "collection", "collection": "Deal", "on": "list"], nodes: []) }
        #expect(throws: WorkflowError.self) { try WorkflowDefinition(trigger: ["type": "webhook"], nodes: []) }
    }
}

@Suite struct RequestNodeTests {
    @Test func addressesThatAreNeverCalled() {
        for address in [
            "127.0.0.1", "10.0.0.5", "172.16.3.4", "192.168.1.1", "169.254.169.254", "::1", "fe80::1", "fd00::1", "0.0.0.0", "100.64.0.1", "::ffff:127.0.0.1",
        ] {
            #expect(RequestNode(allowedHosts: ["x"], allowPrivate: false).refuses(address), "\(address)")
        }
        for address in ["93.184.216.34", "2606:2800:220:1::1"] {
            #expect(!RequestNode(allowedHosts: ["x"], allowPrivate: false).refuses(address), "\(address)")
        }
        // Allowing private hosts (development) never opens the metadata service.
        let relaxed = RequestNode(allowedHosts: ["x"], allowPrivate: true)
        #expect(!relaxed.refuses("127.0.0.1"))
        for metadata in ["169.254.169.254", "::ffff:169.254.169.254", "::ffff:a9fe:a9fe", "64:ff9b::a9fe:a9fe", "fe80::1"] {
            #expect(relaxed.refuses(metadata), "\(metadata)")
        }
    }

    @Test func allowListWithSubdomains() {
        let node = RequestNode(allowedHosts: ["hooks.example.com", "*.corp.example"], allowPrivate: false)
        #expect(node.allows("HOOKS.example.com"))
        #expect(node.allows("a.b.corp.example"))
        #expect(!node.allows("corp.example"))
        #expect(!node.allows("example.com"))
        #expect(!node.allows("hooks.example.com.evil.test"))
    }
}

/// A variable's value lands in a node's filter, URL or body as a value, never as syntax.
@Suite struct VariablesAsValuesTests {
    let variables = Variables(
        context: [
            "data": [
                "name": ["$ne": "zzz"], "email": ["$startsWith": ""], "ids": [1, 2, 3], "nested": [["$eq": 1]], "plain": "Rita", "id": 7,
                "path": "../admin?role=admin#x", "host": "https://other.example/x", "dots": "..",
            ]
        ], now: Date())

    @Test func anObjectFromARecordNeverBecomesOperators() {
        for filter: JSON in [
            ["name": "{{$context.data.name}}"], ["email": ["$eq": "{{$context.data.email}}"]], ["$or": "{{$context.data.nested}}"],
            ["id": ["$in": "{{$context.data.nested}}"]], ["owner": ["name": "{{$context.data.name}}"]], "{{$context.data.name}}",
        ] {
            #expect(throws: WorkflowError.self, "\(filter.serializedString)") { try variables.resolveFilter(filter) }
        }
        #expect(throws: WorkflowError.self) { try variables.operand("{{$context.data.name}}") }
    }

    @Test func valuesAndListsOfValuesStayValues() throws {
        #expect(try variables.resolveFilter(["name": "{{$context.data.plain}}"]) == ["name": "Rita"])
        #expect(try variables.resolveFilter(["id": ["$in": "{{$context.data.ids}}"]]) == ["id": ["$in": [1, 2, 3]]])
        #expect(
            try variables.resolveFilter(["$and": [["id": "{{$context.data.id}}"], ["owner": ["name": ["$ne": "{{$context.data.plain}}"]]]]])
                == ["$and": [["id": 7], ["owner": ["name": ["$ne": "Rita"]]]]])
        #expect(try variables.resolveFilter(["name": "Dear {{$context.data.name}}"]) == ["name": "Dear {\"$ne\":\"zzz\"}"])
        #expect(try variables.operand("{{$context.data.id}}") == 7)
    }

    @Test func aURLKeepsEachValueInItsPlace() throws {
        #expect(
            try variables.resolveURL("https://hooks.example.com/u/{{$context.data.path}}") == "https://hooks.example.com/u/%2E%2E%2Fadmin%3Frole%3Dadmin%23x")
        #expect(
            try variables.resolveURL("https://hooks.example.com/?q={{$context.data.plain}}&n={{$context.data.id}}") == "https://hooks.example.com/?q=Rita&n=7")
        #expect(try variables.resolveURL("{{$context.data.host}}") == "https://other.example/x")
        #expect(try variables.resolveURL("https://hooks.example.com/a/{{$context.data.dots}}/close") == "https://hooks.example.com/a/%2E%2E/close")
    }

    @Test func aTextBodyIsTextAndAFormKeepsItsFields() throws {
        let form = try WorkflowEngine.body(
            "name={{$context.data.plain}}&path={{$context.data.path}}", variables: variables,
            headers: ["Content-Type": "application/x-www-form-urlencoded"])
        #expect(form == "name=Rita&path=%2E%2E%2Fadmin%3Frole%3Dadmin%23x")
        #expect(try WorkflowEngine.body(["who": "{{$context.data.name}}"], variables: variables, headers: [:]) == ["who": ["$ne": "zzz"]])
        #expect(throws: WorkflowError.self) { try WorkflowEngine.body("{\"who\": \"{{$context.data.plain}}\"}", variables: variables, headers: [:]) }
        #expect(throws: WorkflowError.self) { try WorkflowEngine.body("[{{$context.data.id}}, 2]", variables: variables, headers: [:]) }
        // Text that opens with a variable is text; a body that is one variable is its value.
        #expect(try WorkflowEngine.body("{{$context.data.plain}} signed up", variables: variables, headers: [:]) == "Rita signed up")
        #expect(try WorkflowEngine.body("{{$context.data.ids}}", variables: variables, headers: [:]) == [1, 2, 3])
        #expect(WorkflowEngine.bodyTemplateRefusal("{{$context.data.plain}} signed up") == nil)
        #expect(WorkflowEngine.bodyTemplateRefusal("{{$context.data.plain}}") == nil)
    }
}
