import Foundation
import ParleyCore
import Testing

@testable import ParleyAPI

/// REST answers are written by ``ParleyCore/JSONBytesEncoder``: the same bytes Foundation's
/// encoder writes for them, here for the richest answer, a room list with its latest messages
/// (a peer, a file and an attachment, a reply, a reaction, mentions, receipts, app metadata).
struct JSONAnswerTests {
    /// What `GET /v1/rooms?messages=3` answered a user (`parley serve`, 2026-11-30).
    static let roomList = #"""
        {
          "nextCursor": null,
          "rooms": [
            {
              "archived": false,
              "avatar": null,
              "createdAt": "2026-11-30T11:51:22.285Z",
              "description": null,
              "id": 124,
              "lastMessageAt": "2026-11-30T11:51:22.572Z",
              "lastReadMessageId": 32025,
              "lastReadSeq": 2,
              "lastSeq": 2,
              "latestMessages": [
                {
                  "attachments": [],
                  "chatRoomId": 124,
                  "chatRoomUid": "JG4y_3oGx86-zvZlJK6uWN",
                  "content": "first / \"quoted\" é 😀\nline",
                  "createdAt": "2026-11-30T11:51:22.467Z",
                  "deletedAt": null,
                  "deletedById": null,
                  "editedAt": null,
                  "id": 32024,
                  "mentions": [],
                  "metadata": null,
                  "reactions": [
                    {
                      "count": 1,
                      "key": "👍",
                      "me": true
                    }
                  ],
                  "receipts": {
                    "delivered": 0,
                    "read": 0
                  },
                  "replyCount": 1,
                  "replyTo": null,
                  "sentById": 228,
                  "seq": 1,
                  "type": "text",
                  "uid": "m130225"
                },
                {
                  "attachments": [
                    {
                      "checksum": "sha256:3314d76a71a77b74969f114cef6cc8d64ed02d7ea81bf5667222c4dee58fc475",
                      "createdAt": "2026-11-30T11:51:22.378Z",
                      "durationMs": null,
                      "extension": "bin",
                      "height": null,
                      "id": 2,
                      "mimeType": "application/octet-stream",
                      "name": "notes.bin",
                      "protected": true,
                      "size": 2000,
                      "thumbnails": {
                        "large": null,
                        "small": null
                      },
                      "uploadedById": 228,
                      "url": "/v1/files/2/content?expires=1796043082&viewer=228&signature=4RQhD3Ef1umsp7FfJpwPHWPFi4SJo3xvFguPp4vHn48",
                      "width": null
                    }
                  ],
                  "chatRoomId": 124,
                  "chatRoomUid": "JG4y_3oGx86-zvZlJK6uWN",
                  "content": "reply @peer",
                  "createdAt": "2026-11-30T11:51:22.572Z",
                  "deletedAt": null,
                  "deletedById": null,
                  "editedAt": null,
                  "file": {
                    "checksum": "sha256:3314d76a71a77b74969f114cef6cc8d64ed02d7ea81bf5667222c4dee58fc475",
                    "createdAt": "2026-11-30T11:51:22.378Z",
                    "durationMs": null,
                    "extension": "bin",
                    "height": null,
                    "id": 2,
                    "mimeType": "application/octet-stream",
                    "name": "notes.bin",
                    "protected": true,
                    "size": 2000,
                    "thumbnails": {
                      "large": null,
                      "small": null
                    },
                    "uploadedById": 228,
                    "url": "/v1/files/2/content?expires=1796043082&viewer=228&signature=4RQhD3Ef1umsp7FfJpwPHWPFi4SJo3xvFguPp4vHn48",
                    "width": null
                  },
                  "id": 32025,
                  "mentions": [
                    229
                  ],
                  "metadata": {
                    "a": [
                      true,
                      null,
                      "x"
                    ],
                    "n": 3,
                    "z": 1.5
                  },
                  "reactions": [],
                  "receipts": {
                    "delivered": 0,
                    "read": 0
                  },
                  "replyCount": 0,
                  "replyTo": {
                    "deleted": false,
                    "excerpt": "first / \"quoted\" é 😀\nline",
                    "id": 32024,
                    "sentById": 228,
                    "seq": 1
                  },
                  "sentById": 228,
                  "seq": 2,
                  "type": "text",
                  "uid": "m210045"
                }
              ],
              "myRole": "writer",
              "name": null,
              "peer": {
                "avatar": null,
                "createdAt": "2026-11-30T11:51:22.191Z",
                "firstName": "peer18704",
                "id": 229,
                "lastName": "T"
              },
              "topic": "chat-room/JG4y_3oGx86-zvZlJK6uWN",
              "type": "twoparty",
              "uid": "JG4y_3oGx86-zvZlJK6uWN",
              "unreadCount": 0,
              "unreadMentionCount": 0
            }
          ]
        }
        """#

    func expectHandWrittenAsFoundation(_ value: some HandWrittenJSON & Encodable) throws {
        let foundation = String(decoding: try JSONCoding.encoder.encode(value), as: UTF8.self)
        let byHand = String(decoding: try value.writeJSON(userInfo: [:]), as: UTF8.self)
        #expect(byHand == foundation)
    }

    /// The room list's own writer (``RoomsResponse``, ``RoomResponse``), with every field set
    /// and unset: the captured list, then a multiparty room with a name, a description and an
    /// avatar, no peer, no latest messages, nothing read, a peer with an e-mail and an avatar,
    /// and a next page.
    @Test func theRoomListWrittenByHandIsFoundationsBytes() throws {
        let answer = try JSONCoding.decoder.decode(RoomsResponse.self, from: Data(Self.roomList.utf8))
        try expectHandWrittenAsFoundation(answer)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(Self.roomList.utf8)) as? [String: Any])
        let listed = try #require((object["rooms"] as? [[String: Any]])?.first)
        var room = listed
        let file = try #require((room["latestMessages"] as? [[String: Any]])?.last?["file"])
        room["type"] = "multiparty"
        room["name"] = #"Team / "core" \ é 😀"#
        room["description"] = "line\nbreak\u{01}"
        room["avatar"] = file
        room["myRole"] = "admin"
        for key in ["lastMessageAt", "lastReadMessageId", "lastReadSeq"] { room[key] = NSNull() }
        room.removeValue(forKey: "peer")
        room.removeValue(forKey: "latestMessages")
        // A peer as an administrator sees them (with the e-mail), with an avatar.
        var shown = listed
        var peer = try #require(listed["peer"] as? [String: Any])
        peer["email"] = "peer@example.test"
        peer["avatar"] = file
        shown["peer"] = peer
        object["rooms"] = [room, listed, shown]
        object["nextCursor"] = "cursor/+="
        let other = try JSONCoding.decoder.decode(
            RoomsResponse.self, from: try JSONSerialization.data(withJSONObject: object))
        #expect(other.rooms.first?.peer == nil && other.rooms.first?.avatar != nil)
        #expect(other.rooms.last?.peer?.email != nil && other.rooms.last?.peer?.avatar != nil)
        try expectHandWrittenAsFoundation(other)
        for room in other.rooms { try expectHandWrittenAsFoundation(room) }
        try expectHandWrittenAsFoundation(RoomsResponse(rooms: [], nextCursor: nil))
    }

    @Test func aRoomListWithItsLatestMessagesIsWrittenAsFoundationWritesIt() throws {
        let answer = try JSONCoding.decoder.decode(RoomsResponse.self, from: Data(Self.roomList.utf8))
        let message = try #require(answer.rooms.first?.latestMessages?.last)
        #expect(message.file != nil && message.replyTo != nil && message.metadata != nil)
        let foundation = try JSONCoding.encoder.encode(answer)
        let bytes = try JSONBytesEncoder().encode(answer)
        #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: foundation, as: UTF8.self))
    }
}
