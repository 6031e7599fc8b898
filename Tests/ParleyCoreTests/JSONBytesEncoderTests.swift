import Foundation
import Testing

@testable import ParleyCore

/// ``JSONBytesEncoder`` writes what ``JSONCoding/encoder`` writes, byte for byte.
struct JSONBytesEncoderTests {
    func expectSame(_ value: some Encodable, _ comment: Comment? = nil) throws {
        let foundation = String(decoding: try JSONCoding.encoder.encode(value), as: UTF8.self)
        let bytes = String(decoding: try JSONBytesEncoder().encode(value), as: UTF8.self)
        #expect(bytes == foundation, comment)
    }

    struct Everything: Encodable {
        var text = "plain"
        var escaped =
            "quote \" backslash \\ slash / tab \t newline \n return \r feed \u{0C} back \u{08} nul \u{00}"
            + " unit \u{1F} del \u{7F} é ✓ 😀 \u{2028}"
        var integers: [Int64] = [0, -1, Int64.max, Int64.min]
        var small: Int8 = -8
        var unsigned: UInt64 = .max
        var doubles: [Double] = [0, 1, -1.5, 0.1, 1e21, 1e-7, 123_456_789.125, 5e-324, -0.0]
        var float: Float = 0.1
        var yes = true
        var no = false
        var absent: String? = nil
        @NullEncoded var null: String? = nil
        @NullEncoded var present: Int64? = 7
        var date = Date(timeIntervalSince1970: 1_796_000_000.123)
        var url = URL(string: "https://example.com/a/b?c=d&e=f")!
        var data = Data([0, 1, 2, 250, 255])
        var nested = Nested()
        var list = [Nested(), Nested(name: "second")]
        var empty: [String] = []
        var emptyObject: [String: Int] = [:]
        var byKey = ["zeta": 1, "alpha": 2, "Beta": 3, "é": 4, "😀": 5, "a": 6, "aa": 7]
        var byNumber = [3: "three", 1: "one", 20: "twenty"]
        var matrix = [[1, 2], [], [3]]
        var optionals: [Int?] = [1, nil, 3]
    }

    struct Nested: Encodable {
        var name = "first"
        var zebra = 1
        var apple: Bool? = true
    }

    /// Containers asked for by hand: nested, unkeyed, single values, a super-encoder.
    struct Handmade: Encodable {
        enum Keys: String, CodingKey { case b, a, inner, items, parent }
        enum InnerKeys: String, CodingKey { case y, x }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("B", forKey: .b)
            try container.encodeNil(forKey: .a)
            var inner = container.nestedContainer(keyedBy: InnerKeys.self, forKey: .inner)
            try inner.encode(2, forKey: .y)
            try inner.encode(1.25, forKey: .x)
            var items = container.nestedUnkeyedContainer(forKey: .items)
            try items.encode("one")
            try items.encodeNil()
            var deeper = items.nestedContainer(keyedBy: InnerKeys.self)
            try deeper.encode(true, forKey: .x)
            var row = items.nestedUnkeyedContainer()
            try row.encode(Int64(5))
            let parent = container.superEncoder(forKey: .parent)
            var single = parent.singleValueContainer()
            try single.encode("from the super-encoder")
        }
    }

    @Test func scalarsStringsAndContainersMatchFoundationByteForByte() throws {
        try expectSame(Everything())
        try expectSame(Handmade())
    }

    @Test func topLevelValuesMatch() throws {
        try expectSame("top / level \"string\"")
        try expectSame(42)
        try expectSame([Nested(), Nested()])
        try expectSame(Date(timeIntervalSince1970: 0))
        try expectSame([String: String]())
    }

    @Test func theEventsOfThePipelineMatch() throws {
        let values: [JSONValue] = [
            .object([
                "b": .number(1.5), "a": .array([.string("x"), .bool(true), .null]), "c": .integer(3), "d": .number(2),
            ])
        ]
        for value in values { try expectSame(value) }
    }

    @Test func aNonFiniteNumberIsRefusedAsFoundationRefusesIt() {
        #expect(throws: EncodingError.self) { try JSONBytesEncoder().encode([Double.nan]) }
        #expect(throws: EncodingError.self) { try JSONCoding.encoder.encode([Double.nan]) }
    }

    @Test func theEncodedValuesReadTheEncodersUserInfo() throws {
        struct Viewer: Encodable {
            static let key = CodingUserInfoKey(rawValue: "viewer")!
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(encoder.userInfo[Self.key] as? String ?? "nobody")
            }
        }
        let encoded = try JSONBytesEncoder(userInfo: [Viewer.key: "alice"]).encode(["seen by": Viewer()])
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"seen by":"alice"}"#)
    }
}
