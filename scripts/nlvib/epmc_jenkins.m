% NLvib's EPMC (extended periodic motion concept) on a two-DOF chain with an elastic dry
% friction (Jenkins) element: the system of NLvib's example 05 (masses 0.02 and 1, springs
% 0 / 40 / 600, no dampers) with its regularised friction replaced by a Jenkins element of
% stiffness KT and limit force MUN on DOF 1. Writes, per converged point, the fundamental
% modal amplitude sqrt(Q1^H M Q1), the frequency and the modal damping ratio (CSV on stdout
% after a line "BEGIN"). Run by scripts/bench-nlvib-epmc.sh, which compares with `ewr modes`.
%   NLVIB=<NLvib checkout> KT=100 MUN=5 H=21 NTD=1024 LOG10A_S=-1.5 LOG10A_E=1 \
%       octave-cli --no-gui epmc_jenkins.m
nlvib = getenv('NLVIB');
addpath([nlvib '/SRC']); addpath([nlvib '/SRC/MechanicalSystems']);
kt = str2double(getenv('KT')); muN = str2double(getenv('MUN')); H = str2double(getenv('H'));
mi = [.02 1]; ki = [0 40 600]; di = 0*ki;
nonlinear_elements = struct('type','elasticDryFriction','stiffness',kt,...
    'friction_limit_force',muN,'force_direction',[1;0],'ishysteretic',1);
oscillator = ChainOfOscillators(mi,di,ki,nonlinear_elements);
n = oscillator.n;
% Stuck mode: the Jenkins stiffness grounds DOF 1.
Kst = oscillator.K; Kst(1,1) = Kst(1,1) + kt;
[PHI,OM2] = eig(Kst,oscillator.M); [om2,ind] = sort(diag(OM2)); PHI = PHI(:,ind);
om = sqrt(om2(1)); phi = PHI(:,1)/sqrt(PHI(:,1)'*oscillator.M*PHI(:,1));
Ntd = str2double(getenv('NTD')); inorm = 2;
Psi = zeros((2*H+1)*n,1); Psi(n+(1:n)) = phi;
x0 = [Psi;om;0];
fscl = mean(abs(Kst*phi));
t0 = tic;
X = solve_and_continue(x0,@(X) HB_residual(X,oscillator,H,Ntd,'nma',inorm,fscl),...
    str2double(getenv('LOG10A_S')),str2double(getenv('LOG10A_E')),.01,...
    struct('flag',1),{},optimset('Display','off','Jacobian','on','MaxIter',50));
elapsed = toc(t0);
a = 10.^X(end,:); om = X(end-2,:); del = X(end-1,:);
% Fundamental complex coefficients Q1 = a (Psi_c - i Psi_s), DOFs n+1 .. 2n (cos), 2n+1 .. 3n.
Q1 = (X(n+(1:n),:) - 1i*X(2*n+(1:n),:)).*repmat(a,n,1);
a1 = sqrt(real(sum(conj(Q1).*(oscillator.M*Q1),1)));
printf('points %d, seconds %.3f\n', size(X,2), elapsed);
printf('BEGIN\n');
for k = 1:size(X,2)
  printf('%.10e,%.10e,%.10e\n', a1(k), om(k), del(k));
end
