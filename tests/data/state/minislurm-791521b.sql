PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE jobs (
	job_id INTEGER NOT NULL, 
	name VARCHAR NOT NULL, 
	uid INTEGER NOT NULL, 
	gid INTEGER NOT NULL, 
	user VARCHAR NOT NULL, 
	"group" VARCHAR NOT NULL, 
	account VARCHAR NOT NULL, 
	qos VARCHAR NOT NULL, 
	partition VARCHAR NOT NULL, 
	state VARCHAR NOT NULL, 
	reason VARCHAR NOT NULL, 
	nice INTEGER NOT NULL, 
	hold VARCHAR NOT NULL, 
	time_limit INTEGER NOT NULL, 
	partition_time_limit BOOLEAN NOT NULL, 
	submit_time FLOAT NOT NULL, 
	eligible_time FLOAT NOT NULL, 
	start_time FLOAT NOT NULL, 
	end_time FLOAT NOT NULL, 
	request JSON NOT NULL, 
	allocation JSON, 
	exit_code INTEGER NOT NULL, 
	exit_signal INTEGER NOT NULL, 
	kill_outcome VARCHAR NOT NULL, 
	work_dir TEXT NOT NULL, 
	submit_dir TEXT NOT NULL, 
	stdout TEXT NOT NULL, 
	stderr TEXT NOT NULL, 
	stdin TEXT NOT NULL, 
	submit_host VARCHAR NOT NULL, 
	command TEXT NOT NULL, 
	gres VARCHAR NOT NULL, 
	batch BOOLEAN NOT NULL, 
	requeue BOOLEAN NOT NULL, 
	restarts INTEGER NOT NULL, 
	prio_process INTEGER NOT NULL, 
	last_sched_eval FLOAT NOT NULL, 
	launched BOOLEAN NOT NULL, 
	array_job_id INTEGER NOT NULL, 
	array_task_id INTEGER, 
	array_tasks TEXT NOT NULL, 
	array_throttle INTEGER NOT NULL, 
	array_spec TEXT NOT NULL, 
	dependency TEXT NOT NULL, 
	kill_on_invalid_dep BOOLEAN NOT NULL, 
	begin_time FLOAT NOT NULL, 
	deadline FLOAT NOT NULL, 
	cancelled_by INTEGER NOT NULL, 
	max_rss INTEGER NOT NULL, 
	total_cpu FLOAT NOT NULL, 
	comment TEXT NOT NULL, 
	mail_type VARCHAR NOT NULL, 
	mail_user VARCHAR NOT NULL, 
	open_mode VARCHAR NOT NULL, 
	warn_signal INTEGER NOT NULL, 
	warn_time INTEGER NOT NULL, 
	warn_batch BOOLEAN NOT NULL, 
	warn_sent BOOLEAN NOT NULL, 
	reservation VARCHAR NOT NULL, 
	priority_set INTEGER NOT NULL, 
	options JSON, 
	PRIMARY KEY (job_id)
);
INSERT INTO jobs VALUES(1,'done-job',0,0,'root','root','root','normal','gpu','COMPLETED','None',0,'',4294967295,1,1796282091.4498519898,1796282091.4498519898,1796282091.4557673931,1796282091.6299195289,'{"min_nodes": 2, "max_nodes": 2, "ntasks": 2, "ntasks_per_node": 0, "cpus_per_task": 1, "mem_per_node": 0, "mem_per_cpu": 0, "gpus_per_node": 2, "gpus_per_task": 0, "gpus": 0, "req_nodes": [], "exc_nodes": [], "nodes_set": true, "ntasks_set": false, "cpus_per_task_set": false, "exclusive": false, "gpu_type": "", "untyped_nodes": [], "part_mem": 16000, "switches": 0, "switch_wait": 0, "segment": 0, "exclusive_topo": false}','[{"node": "n1", "cpus": 1, "mem": 0, "gpus": [0, 1], "ntasks": 1}, {"node": "n2", "cpus": 1, "mem": 0, "gpus": [0, 1], "ntasks": 1}]',0,0,'','/tmp/old-cluster/work','/tmp/old-cluster/work','','','','vm','','gpu:2',1,1,0,0,1796282091.4557673931,1,0,NULL,'',0,'','',0,0.0,0.0,-1,14076,0.047219999999999998085,'kept','','','',0,0,0,0,'',0,'{}');
INSERT INTO jobs VALUES(2,'held-job',0,0,'root','root','root','normal','gpu','PENDING','JobHeldUser',0,'user',10,0,1796282091.4916841983,0.0,0.0,0.0,'{"min_nodes": 1, "max_nodes": 1, "ntasks": 1, "ntasks_per_node": 0, "cpus_per_task": 1, "mem_per_node": 0, "mem_per_cpu": 0, "gpus_per_node": 0, "gpus_per_task": 0, "gpus": 0, "req_nodes": [], "exc_nodes": [], "nodes_set": false, "ntasks_set": false, "cpus_per_task_set": false, "exclusive": false, "gpu_type": "", "untyped_nodes": [], "part_mem": 16000, "switches": 0, "switch_wait": 0, "segment": 0, "exclusive_topo": false}','null',0,0,'','/tmp/old-cluster/work','/tmp/old-cluster/work','','','','vm','','',1,1,0,0,1796282091.4916841983,0,0,NULL,'',0,'','',0,0.0,0.0,-1,0,0.0,'','','','',0,0,0,0,'',0,'{}');
INSERT INTO jobs VALUES(3,'arr',0,0,'root','root','root','normal','gpu','COMPLETED','None',0,'',4294967295,1,1796282091.5249118804,1796282091.5249118804,1796282091.5281803608,1796282091.5703575611,'{"min_nodes": 1, "max_nodes": 1, "ntasks": 1, "ntasks_per_node": 0, "cpus_per_task": 1, "mem_per_node": 0, "mem_per_cpu": 0, "gpus_per_node": 0, "gpus_per_task": 0, "gpus": 0, "req_nodes": [], "exc_nodes": [], "nodes_set": false, "ntasks_set": false, "cpus_per_task_set": false, "exclusive": false, "gpu_type": "", "untyped_nodes": [], "part_mem": 16000, "switches": 0, "switch_wait": 0, "segment": 0, "exclusive_topo": false}','[{"node": "n1", "cpus": 1, "mem": 0, "gpus": [], "ntasks": 1}]',0,0,'','/tmp/old-cluster/work','/tmp/old-cluster/work','','','','vm','','',1,1,0,0,1796282091.5281803608,1,3,3,'',0,'1-3','',0,0.0,0.0,-1,14088,0.0025399999999999997232,'','','','',0,0,0,0,'',0,'{}');
INSERT INTO jobs VALUES(4,'arr',0,0,'root','root','root','normal','gpu','COMPLETED','None',0,'',4294967295,1,1796282091.5249118804,1796282091.5249118804,1796282091.5281803608,1796282091.5809142589,'{"min_nodes": 1, "max_nodes": 1, "ntasks": 1, "ntasks_per_node": 0, "cpus_per_task": 1, "mem_per_node": 0, "mem_per_cpu": 0, "gpus_per_node": 0, "gpus_per_task": 0, "gpus": 0, "req_nodes": [], "exc_nodes": [], "nodes_set": false, "ntasks_set": false, "cpus_per_task_set": false, "exclusive": false, "gpu_type": "", "untyped_nodes": [], "part_mem": 16000, "switches": 0, "switch_wait": 0, "segment": 0, "exclusive_topo": false}','[{"node": "n1", "cpus": 1, "mem": 0, "gpus": [], "ntasks": 1}]',0,0,'','/tmp/old-cluster/work','/tmp/old-cluster/work','','','','vm','','',1,1,0,0,1796282091.5281803608,1,3,1,'',0,'1-3','',0,0.0,0.0,-1,14076,0.002523000000000000069,'','','','',0,0,0,0,'',0,'{}');
INSERT INTO jobs VALUES(5,'arr',0,0,'root','root','root','normal','gpu','COMPLETED','None',0,'',4294967295,1,1796282091.5249118804,1796282091.5249118804,1796282091.5281803608,1796282091.60161376,'{"min_nodes": 1, "max_nodes": 1, "ntasks": 1, "ntasks_per_node": 0, "cpus_per_task": 1, "mem_per_node": 0, "mem_per_cpu": 0, "gpus_per_node": 0, "gpus_per_task": 0, "gpus": 0, "req_nodes": [], "exc_nodes": [], "nodes_set": false, "ntasks_set": false, "cpus_per_task_set": false, "exclusive": false, "gpu_type": "", "untyped_nodes": [], "part_mem": 16000, "switches": 0, "switch_wait": 0, "segment": 0, "exclusive_topo": false}','[{"node": "n1", "cpus": 1, "mem": 0, "gpus": [], "ntasks": 1}]',0,0,'','/tmp/old-cluster/work','/tmp/old-cluster/work','','','','vm','','',1,1,0,0,1796282091.5281803608,1,3,2,'',0,'1-3','',0,0.0,0.0,-1,14088,0.0021509999999999997004,'','','','',0,0,0,0,'',0,'{}');
INSERT INTO jobs VALUES(6,'cancelled',0,0,'root','root','root','normal','gpu','CANCELLED','BeginTime',0,'',4294967295,1,1796282091.5912029742,1796285691.0,1796282091.6496157646,1796282091.6496157646,'{"min_nodes": 1, "max_nodes": 1, "ntasks": 1, "ntasks_per_node": 0, "cpus_per_task": 1, "mem_per_node": 0, "mem_per_cpu": 0, "gpus_per_node": 0, "gpus_per_task": 0, "gpus": 0, "req_nodes": [], "exc_nodes": [], "nodes_set": false, "ntasks_set": false, "cpus_per_task_set": false, "exclusive": false, "gpu_type": "", "untyped_nodes": [], "part_mem": 16000, "switches": 0, "switch_wait": 0, "segment": 0, "exclusive_topo": false}','null',0,0,'','/tmp/old-cluster/work','/tmp/old-cluster/work','','','','vm','','',1,1,0,0,1796282091.5932822227,0,0,NULL,'',0,'','',0,1796285691.0,0.0,0,0,0.0,'','','','',0,0,0,0,'',0,'{}');
INSERT INTO jobs VALUES(7,'failed',0,0,'root','root','root','normal','gpu','FAILED','NonZeroExitCode',0,'',4294967295,1,1796282091.6773376465,1796282091.6773376465,1796282091.6794631481,1796282091.6990435123,'{"min_nodes": 1, "max_nodes": 1, "ntasks": 1, "ntasks_per_node": 0, "cpus_per_task": 1, "mem_per_node": 0, "mem_per_cpu": 0, "gpus_per_node": 0, "gpus_per_task": 0, "gpus": 0, "req_nodes": [], "exc_nodes": [], "nodes_set": false, "ntasks_set": false, "cpus_per_task_set": false, "exclusive": false, "gpu_type": "", "untyped_nodes": [], "part_mem": 16000, "switches": 0, "switch_wait": 0, "segment": 0, "exclusive_topo": false}','[{"node": "n1", "cpus": 1, "mem": 0, "gpus": [], "ntasks": 1}]',3,0,'','/tmp/old-cluster/work','/tmp/old-cluster/work','','','','vm','','',1,1,0,0,1796282091.6794631481,1,0,NULL,'',0,'','',0,0.0,0.0,-1,14088,0.0018839999999999998241,'','','','',0,0,0,0,'',0,'{}');
CREATE TABLE nodes (
	name VARCHAR NOT NULL, 
	state VARCHAR NOT NULL, 
	drain BOOLEAN NOT NULL, 
	reason TEXT NOT NULL, 
	reason_uid INTEGER NOT NULL, 
	reason_time FLOAT NOT NULL, 
	reboot VARCHAR NOT NULL, 
	reboot_next VARCHAR NOT NULL, 
	PRIMARY KEY (name)
);
INSERT INTO nodes VALUES('n2','IDLE',0,'',0,0.0,'','');
INSERT INTO nodes VALUES('n1','IDLE',0,'',0,0.0,'','');
CREATE TABLE step_usage (
	job_id INTEGER NOT NULL, 
	run INTEGER NOT NULL, 
	step_id BIGINT NOT NULL, 
	node VARCHAR NOT NULL, 
	tasks JSON NOT NULL, 
	PRIMARY KEY (job_id, run, step_id, node)
);
CREATE TABLE accounts (
	name VARCHAR NOT NULL, 
	description TEXT NOT NULL, 
	organization TEXT NOT NULL, 
	PRIMARY KEY (name)
);
INSERT INTO accounts VALUES('root','default root account','root');
INSERT INTO accounts VALUES('physics','phys','physics');
CREATE TABLE acct_users (
	name VARCHAR NOT NULL, 
	default_account VARCHAR NOT NULL, 
	admin VARCHAR NOT NULL, 
	PRIMARY KEY (name)
);
INSERT INTO acct_users VALUES('root','root','Administrator');
CREATE TABLE assocs (
	account VARCHAR NOT NULL, 
	user VARCHAR NOT NULL, 
	parent VARCHAR NOT NULL, 
	shares INTEGER NOT NULL, 
	max_jobs INTEGER NOT NULL, 
	max_submit INTEGER NOT NULL, 
	grp_tres VARCHAR NOT NULL, 
	raw_usage FLOAT NOT NULL, 
	usage_time FLOAT NOT NULL, 
	PRIMARY KEY (account, user)
);
INSERT INTO assocs VALUES('root','','',1,-1,-1,'',0.0,1796282090.8114473819);
INSERT INTO assocs VALUES('root','root','',1,-1,-1,'',0.0,1796282090.8114473819);
INSERT INTO assocs VALUES('physics','','root',1,-1,-1,'',0.0,1796282090.8114473819);
INSERT INTO assocs VALUES('physics','root','physics',1,-1,-1,'',0.0,1796282090.8114473819);
CREATE TABLE reservations (
	name VARCHAR NOT NULL, 
	start FLOAT NOT NULL, 
	"end" FLOAT NOT NULL, 
	nodes JSON NOT NULL, 
	users JSON NOT NULL, 
	accounts JSON NOT NULL, 
	flags JSON NOT NULL, 
	partition VARCHAR NOT NULL, 
	PRIMARY KEY (name)
);
CREATE TABLE qos (
	name VARCHAR NOT NULL, 
	description TEXT NOT NULL, 
	priority INTEGER NOT NULL, 
	max_jobs_pu INTEGER NOT NULL, 
	max_submit_pu INTEGER NOT NULL, 
	preempt VARCHAR NOT NULL, 
	preempt_mode VARCHAR NOT NULL, 
	PRIMARY KEY (name)
);
INSERT INTO qos VALUES('normal','Normal QOS default',0,-1,-1,'','');
CREATE TABLE job_scripts (
	job_id INTEGER NOT NULL, 
	script BLOB NOT NULL, 
	argv JSON NOT NULL, 
	environment JSON NOT NULL, 
	umask INTEGER NOT NULL, 
	PRIMARY KEY (job_id), 
	FOREIGN KEY(job_id) REFERENCES jobs (job_id)
);
INSERT INTO job_scripts VALUES(1,X'23212f62696e2f73680a2320546869732073637269707420776173206372656174656420627920736261746368202d2d777261702e0a0a7372756e20686f73746e616d653b206563686f206f75740a','[]','{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp/old-cluster", "LANG": "C.UTF-8", "MINISLURM_HOME": "/tmp/old-cluster"}',18);
INSERT INTO job_scripts VALUES(2,X'23212f62696e2f73680a2320546869732073637269707420776173206372656174656420627920736261746368202d2d777261702e0a0a6563686f2068656c640a','[]','{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp/old-cluster", "LANG": "C.UTF-8", "MINISLURM_HOME": "/tmp/old-cluster"}',18);
INSERT INTO job_scripts VALUES(3,X'23212f62696e2f73680a2320546869732073637269707420776173206372656174656420627920736261746368202d2d777261702e0a0a6563686f2024534c55524d5f41525241595f5441534b5f49440a','[]','{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp/old-cluster", "LANG": "C.UTF-8", "MINISLURM_HOME": "/tmp/old-cluster"}',18);
INSERT INTO job_scripts VALUES(6,X'23212f62696e2f73680a2320546869732073637269707420776173206372656174656420627920736261746368202d2d777261702e0a0a747275650a','[]','{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp/old-cluster", "LANG": "C.UTF-8", "MINISLURM_HOME": "/tmp/old-cluster"}',18);
INSERT INTO job_scripts VALUES(7,X'23212f62696e2f73680a2320546869732073637269707420776173206372656174656420627920736261746368202d2d777261702e0a0a6578697420330a','[]','{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp/old-cluster", "LANG": "C.UTF-8", "MINISLURM_HOME": "/tmp/old-cluster"}',18);
CREATE TABLE steps (
	job_id INTEGER NOT NULL, 
	step_id INTEGER NOT NULL, 
	name VARCHAR NOT NULL, 
	state VARCHAR NOT NULL, 
	nodes JSON NOT NULL, 
	ntasks INTEGER NOT NULL, 
	cpus_per_task INTEGER NOT NULL, 
	gpus_per_task INTEGER NOT NULL, 
	distribution VARCHAR NOT NULL, 
	overlap BOOLEAN NOT NULL, 
	argv TEXT NOT NULL, 
	uid INTEGER NOT NULL, 
	gid INTEGER NOT NULL, 
	start_time FLOAT NOT NULL, 
	end_time FLOAT NOT NULL, 
	exit_code INTEGER NOT NULL, 
	signal INTEGER NOT NULL, 
	reported JSON NOT NULL, 
	max_rss INTEGER NOT NULL, 
	total_cpu FLOAT NOT NULL, 
	srun_host VARCHAR NOT NULL, 
	srun_pid INTEGER NOT NULL, 
	tres_per_node VARCHAR NOT NULL, 
	cancelled_by INTEGER NOT NULL, 
	PRIMARY KEY (job_id, step_id), 
	FOREIGN KEY(job_id) REFERENCES jobs (job_id)
);
INSERT INTO steps VALUES(1,0,'hostname','COMPLETED','[{"node": "n1", "cpus": 1, "mem": 0, "gpus": [0, 1], "task_ids": [0]}, {"node": "n2", "cpus": 1, "mem": 0, "gpus": [0, 1], "task_ids": [1]}]',2,1,0,'block',0,'hostname',0,0,1796282091.5525331496,1796282091.6262204647,0,0,'["n1", "n2"]',14244,0.0035259999999999996206,'n1',16504,'gres:gpu:2',-1);
CREATE TABLE job_runs (
	job_id INTEGER NOT NULL, 
	run INTEGER NOT NULL, 
	state VARCHAR NOT NULL, 
	ended FLOAT NOT NULL, 
	job JSON NOT NULL, 
	steps JSON NOT NULL, 
	PRIMARY KEY (job_id, run), 
	FOREIGN KEY(job_id) REFERENCES jobs (job_id)
);
CREATE INDEX ix_jobs_end_time ON jobs (end_time);
CREATE INDEX ix_jobs_user ON jobs (user);
CREATE INDEX ix_jobs_array_job_id ON jobs (array_job_id);
CREATE INDEX ix_jobs_state ON jobs (state);
COMMIT;
