"""jointbus.robots.hb50.legged — hb50's legs and body as pure models: kinematics, state
estimation, standing poses and the trot.

Where it sits: :mod:`jointbus.robots.hb50`, under both of hb50's processes — the control node
(:mod:`jointbus.robots.hb50.control`), which walks the robot with them, and the bridge
(:mod:`jointbus.robots.hb50.bridge`), whose fallback runs the same trot to bring a walking robot
to a stop when the control node stalls or dies (a robot moving at speed cannot stop by planting
its feet). Neither process imports the other; both import this. No bus, no clock:

- :mod:`.leg_kinematics` — feet, foot velocities and ground forces of all legs in closed form
  (compiled core ``_leg_accel``);
- :mod:`.state_estimator` — :class:`StateEstimator`: legs (contact, force), body pose and twist;
- :mod:`.walking_estimator` — leg odometry fused with the IMU while walking;
- :mod:`.stand_pose` — :class:`StandPose`: body height / roll / pitch / yaw → joint targets (IK);
- :mod:`.gait_scheduler`, :mod:`.swing`, :mod:`.stance_forces`, :mod:`.walking` — the trot.
"""
