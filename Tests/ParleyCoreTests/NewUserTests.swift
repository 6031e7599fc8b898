import ParleyCore
import Testing

struct NewUserTests {
    func user(email: String = "ada@example.com", firstName: String = "Ada", lastName: String = "Lovelace") -> NewUser {
        NewUser(email: email, firstName: firstName, lastName: lastName, passwordHash: "x")
    }

    @Test func acceptsAndTrimsAValidUser() throws {
        let validated = try user(email: " ada@example.com ").validated()
        #expect(validated.email == "ada@example.com")
    }

    @Test(arguments: ["", "ada", "ada@", "@example.com", "a b@example.com", "ada@example"])
    func rejectsAMalformedEmailNamingTheField(email: String) {
        #expect(throws: ParleyError.invalidRequest("email must be an e-mail address", field: "email")) {
            try user(email: email).validated()
        }
    }

    @Test func rejectsEmptyAndOverlongNames() {
        #expect(throws: ParleyError.self) { try user(firstName: " ").validated() }
        let error = #expect(throws: ParleyError.self) {
            try user(lastName: String(repeating: "x", count: 101)).validated()
        }
        #expect(error?.field == "lastName")
        #expect(error?.code == .invalidRequest)
    }
}
