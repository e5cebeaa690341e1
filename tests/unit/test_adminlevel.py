"""AdminLevel: sacctmgr's rules for setting it, and who it makes an operator or administrator."""

from __future__ import annotations

import pwd

import pytest

from ctld.accounting import assocedit
from ctld.accounting.assoc import AcctError, parse_admin_level
from ctld.accounting.privileges import Privileges
from minislurm.accounts import ADMINISTRATOR, NO_ADMIN, OPERATOR, Book, initial_book


def _book_with(*names: str) -> Book:
    book = initial_book()
    book, _ = assocedit.add_accounts(book, ["acme"], {}, "c")
    if names:
        book, _ = assocedit.add_users(book, list(names), {"Account": "acme"}, "c")
    return book


@pytest.mark.parametrize(
    ("given", "level"),
    [
        ("Operator", OPERATOR), ("oper", OPERATOR), ("Admin", ADMINISTRATOR),
        ("Administrator", ADMINISTRATOR), ("SuperUser", ADMINISTRATOR), ("none", NO_ADMIN),
        ("Bogus", ""), ("", ""),
    ],
)  # fmt: skip
def test_admin_level_is_read_by_its_first_letter_as_slurm_does(given: str, level: str) -> None:
    assert parse_admin_level(given) == level


def test_modify_sets_the_level_and_says_modified_users() -> None:
    book = _book_with("alice", "bob")
    new, lines = assocedit.modify(
        book, "user", {"name": "bob"}, {"AdminLevel": "Operator", "MaxJobs": "3"}, "c"
    )
    assert lines == [
        " Modified users...", "  bob", " Modified user associations...",
        "  C = c          A = acme                 U = bob      ",
    ]  # fmt: skip
    assert (new.users["bob"].admin, new.users["alice"].admin) == (OPERATOR, NO_ADMIN)
    assert new.assocs[("acme", "bob")].max_jobs == 3


def test_only_an_administrator_changes_admin_levels() -> None:
    book = _book_with("bob")
    for grantor in (OPERATOR, NO_ADMIN):
        with pytest.raises(AcctError, match="You must be a super user to modify a users admin"):
            assocedit.modify(book, "user", {"name": "bob"}, {"AdminLevel": "None"}, "c", grantor)
    new, _ = assocedit.modify(book, "user", {"name": "bob"}, {"AdminLevel": "a"}, "c")
    assert new.users["bob"].admin == ADMINISTRATOR


def test_an_unreadable_level_modifies_nothing() -> None:
    book = _book_with("bob")
    with pytest.raises(AcctError, match=r"^ Nothing modified$"):
        assocedit.modify(book, "user", {"name": "bob"}, {"AdminLevel": "Bogus"}, "c")
    with pytest.raises(AcctError, match="Unknown option: AdminLevel"):
        assocedit.modify(book, "account", {"name": "acme"}, {"AdminLevel": "o"}, "c")


def test_a_new_user_gets_at_most_the_adders_level() -> None:
    book = _book_with()
    new, lines = assocedit.add_users(
        book, ["op"], {"Account": "acme", "AdminLevel": "Operator"}, "c", OPERATOR
    )
    assert lines[:4] == [" Adding User(s)", "  op", " Settings =", "  Admin Level     = Operator"]
    assert new.users["op"].admin == OPERATOR
    with pytest.raises(AcctError, match="super user"):
        assocedit.add_users(book, ["x"], {"Account": "acme", "AdminLevel": "Admin"}, "c", OPERATOR)


def test_privileges_follow_the_users_levels_by_uid() -> None:
    nobody = pwd.getpwnam("nobody").pw_uid
    privileges = Privileges(frozenset({0}))
    book = _book_with("nobody", "no-such-user-here")
    privileges.follow(book)
    assert nobody not in privileges and 0 in privileges and privileges.is_admin(0)
    book, _ = assocedit.modify(
        book, "user", {"name": "nobody,no-such-user-here"}, {"AdminLevel": "Operator"}, "c"
    )
    privileges.follow(book)
    assert nobody in privileges and not privileges.is_admin(nobody)
    assert privileges.level(nobody) == OPERATOR
    book, _ = assocedit.modify(book, "user", {"name": "nobody"}, {"AdminLevel": "Admin"}, "c")
    privileges.follow(book)
    assert privileges.is_admin(nobody)
