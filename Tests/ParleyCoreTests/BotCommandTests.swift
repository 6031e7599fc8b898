import Foundation
import ParleyCore
import Testing

/// What a bot hears: `/{name}` in any case, followed by a space or the end; and what its
/// answer may be.
struct BotCommandTests {
    @Test(arguments: [
        ("/echo", "echo", ""), ("/Echo hello world", "echo", "hello world"), ("/ECHO   spaced", "echo", "spaced"),
        ("/echo\tx", "echo", "x"), ("/my-bot_2 a", "my-bot_2", "a"),
    ])
    func aCommandNamesItsBotAndKeepsItsArguments(content: String, name: String, args: String) throws {
        let parsed = try #require(BotCommand.parse(content))
        #expect(parsed.name == name && parsed.args == args)
    }

    @Test(arguments: [
        "echo", " /echo", "/", "/e", "/echo!", "/échо", "//echo", "/\(String(repeating: "a", count: 33))",
    ])
    func otherContentIsNoCommand(content: String) {
        #expect(BotCommand.parse(content) == nil)
    }

    @Test func aNoticeOrAnotherEventIsNoCommand() {
        let notice = QueuedWebhookEvent(
            id: "1-0", type: .messageCreated, roomId: 5, timestamp: Date(),
            data: #"{"chatRoomId":5,"content":"/echo hi","sentById":null}"#)
        let edit = QueuedWebhookEvent(
            id: "1-0", type: .messageEdited, roomId: 5, timestamp: Date(),
            data: #"{"chatRoomId":5,"content":"/echo hi","sentById":3}"#)
        #expect(BotCommand.of(notice) == nil && BotCommand.of(edit) == nil)
    }

    @Test func anAnswerIsAMessageOrNothing() throws {
        let said = try #require(
            try BotAnswer.message(of: Data(#"{"content":"pong","metadata":{"k":"v"}}"#.utf8), uid: "cmd_1"))
        #expect(said.content == "pong" && said.uid == "cmd_1" && said.metadata != nil)
        #expect(try BotAnswer.message(of: Data(" \n".utf8), uid: "cmd_1") == nil)
        #expect(throws: ParleyError.self) { try BotAnswer.message(of: Data("pong".utf8), uid: "cmd_1") }
        #expect(throws: ParleyError.self) { try BotAnswer.message(of: Data(#"{"text":"pong"}"#.utf8), uid: "cmd_1") }
    }
}
