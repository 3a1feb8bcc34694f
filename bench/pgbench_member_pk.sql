-- The floor of GET balance in bench/run_all.sh: the member's row by its
-- primary key (run with -M prepared).
SELECT * FROM members WHERE member_id = :member;
